/** The authenticated caller as guards attach it to the request (`request.user`). */
export interface AuthUser {
  id: number;
  username: string;
  isStaff: boolean;
  /** The server-side session (refresh session) the access token belongs to. */
  sessionId: string;
}

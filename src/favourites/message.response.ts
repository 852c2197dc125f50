export class MessageResponse {
  message: string;
}

import { Column, Entity, Index, JoinColumn, ManyToOne, PrimaryColumn } from 'typeorm';
import { UserEntity } from '../users/user.entity.js';

/**
 * A login: what a refresh token (and every access token issued from it) is tied to. Revoking the row ends the
 * refresh token and, on their next request, its access tokens.
 */
@Entity({ name: 'refresh_sessions' })
@Index('refresh_sessions_user_id_idx', ['userId'])
export class RefreshSessionEntity {
  @PrimaryColumn({ type: 'uuid', primaryKeyConstraintName: 'refresh_sessions_pkey' })
  id: string;

  @Column({ name: 'user_id', type: 'integer' })
  userId: number;

  @ManyToOne(() => UserEntity, { onDelete: 'CASCADE', nullable: false })
  @JoinColumn({ name: 'user_id', foreignKeyConstraintName: 'refresh_sessions_user_id_fkey' })
  user?: UserEntity;

  @Column({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'last_used_at', type: 'timestamptz' })
  lastUsedAt: Date;

  @Column({ name: 'expires_at', type: 'timestamptz' })
  expiresAt: Date;

  @Column({ name: 'revoked_at', type: 'timestamptz', nullable: true })
  revokedAt: Date | null;
}

import {
  Check,
  Column,
  CreateDateColumn,
  Entity,
  Index,
  JoinColumn,
  ManyToOne,
  PrimaryGeneratedColumn,
  Unique,
  UpdateDateColumn,
} from 'typeorm';
import { UserEntity } from '../users/user.entity.js';
import { RefreshSessionEntity } from './refresh-session.entity.js';

export const DEVICE_ENVIRONMENTS = ['sandbox', 'production'] as const;
export type DeviceEnvironment = (typeof DEVICE_ENVIRONMENTS)[number];

/**
 * A push notification token, held by one user at a time. `sessionId` is the login that registered it: while that
 * session is live, another account cannot take the token over.
 */
@Entity({ name: 'device_tokens' })
@Unique('device_tokens_token_key', ['token'])
@Check('device_tokens_environment_check', "environment IN ('sandbox', 'production')")
@Index('device_tokens_user_id_idx', ['userId'])
@Index('device_tokens_session_id_idx', ['sessionId'])
export class DeviceTokenEntity {
  @PrimaryGeneratedColumn({ primaryKeyConstraintName: 'device_tokens_pkey' })
  id: number;

  @Column({ type: 'varchar', length: 512 })
  token: string;

  @Column({ type: 'varchar', length: 16 })
  environment: DeviceEnvironment;

  @Column({ name: 'is_active', type: 'boolean', default: true })
  isActive: boolean;

  @Column({ name: 'user_id', type: 'integer' })
  userId: number;

  @ManyToOne(() => UserEntity, { onDelete: 'CASCADE', nullable: false })
  @JoinColumn({ name: 'user_id', foreignKeyConstraintName: 'device_tokens_user_id_fkey' })
  user?: UserEntity;

  @Column({ name: 'session_id', type: 'uuid', nullable: true })
  sessionId: string | null;

  @ManyToOne(() => RefreshSessionEntity, { onDelete: 'SET NULL', nullable: true })
  @JoinColumn({ name: 'session_id', foreignKeyConstraintName: 'device_tokens_session_id_fkey' })
  session?: RefreshSessionEntity | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}

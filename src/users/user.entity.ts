import {
  Column,
  CreateDateColumn,
  Entity,
  Index,
  PrimaryGeneratedColumn,
  UpdateDateColumn,
} from 'typeorm';

/** `email` is '' for a social account whose provider did not verify one (the unique index skips ''). */
@Entity({ name: 'users' })
@Index('users_username_lower_key', { synchronize: false })
@Index('users_email_lower_key', { synchronize: false })
export class UserEntity {
  @PrimaryGeneratedColumn()
  id: number;

  @Column({ type: 'varchar', length: 150 })
  username: string;

  @Column({ type: 'varchar', length: 254 })
  email: string;

  /** argon2id PHC string; null for social-only accounts. */
  @Column({ name: 'password_hash', type: 'text', nullable: true })
  passwordHash: string | null;

  @Column({ name: 'is_staff', type: 'boolean', default: false })
  isStaff: boolean;

  @Column({ name: 'is_active', type: 'boolean', default: true })
  isActive: boolean;

  @Column({ name: 'first_name', type: 'varchar', length: 150, default: '' })
  firstName: string;

  @Column({ name: 'last_name', type: 'varchar', length: 150, default: '' })
  lastName: string;

  /** Notices by email (decisions on the user's submissions); security notices are always sent. */
  @Column({ name: 'notify_email', type: 'boolean', default: true })
  notifyEmail: boolean;

  @Column({ name: 'notify_push', type: 'boolean', default: true })
  notifyPush: boolean;

  @Column({ name: 'last_login_at', type: 'timestamptz', nullable: true })
  lastLoginAt: Date | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}

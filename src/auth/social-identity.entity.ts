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
} from 'typeorm';
import { UserEntity } from '../users/user.entity.js';

export const SOCIAL_PROVIDERS = ['apple', 'google'] as const;
export type SocialProvider = (typeof SOCIAL_PROVIDERS)[number];

/** An account at an identity provider (provider + its stable `sub`) that signs in as one of our users. */
@Entity({ name: 'social_identities' })
@Unique('social_identities_provider_subject_key', ['provider', 'subject'])
@Check('social_identities_provider_check', "provider IN ('apple', 'google')")
@Index('social_identities_user_id_idx', ['userId'])
export class SocialIdentityEntity {
  @PrimaryGeneratedColumn({ primaryKeyConstraintName: 'social_identities_pkey' })
  id: number;

  @Column({ type: 'varchar', length: 16 })
  provider: SocialProvider;

  @Column({ type: 'varchar', length: 255 })
  subject: string;

  @Column({ name: 'user_id', type: 'integer' })
  userId: number;

  @ManyToOne(() => UserEntity, { onDelete: 'CASCADE', nullable: false })
  @JoinColumn({ name: 'user_id', foreignKeyConstraintName: 'social_identities_user_id_fkey' })
  user?: UserEntity;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}

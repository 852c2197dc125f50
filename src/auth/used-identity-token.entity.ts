import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/** A social identity token already used to sign in, kept until it expires (replay guard without Redis). */
@Entity({ name: 'used_identity_tokens' })
@Index('used_identity_tokens_expires_at_idx', ['expiresAt'])
export class UsedIdentityTokenEntity {
  @PrimaryColumn({
    type: 'varchar',
    length: 128,
    primaryKeyConstraintName: 'used_identity_tokens_pkey',
  })
  key: string;

  @Column({ name: 'expires_at', type: 'timestamptz' })
  expiresAt: Date;
}

import { DeviceTokenEntity } from '../auth/device-token.entity.js';
import { RefreshSessionEntity } from '../auth/refresh-session.entity.js';
import { SocialIdentityEntity } from '../auth/social-identity.entity.js';
import { UsedIdentityTokenEntity } from '../auth/used-identity-token.entity.js';
import { UserEntity } from '../users/user.entity.js';

/** Every TypeORM entity of the service, registered with the DataSource in one place. */
export const ENTITIES = [
  UserEntity,
  RefreshSessionEntity,
  SocialIdentityEntity,
  DeviceTokenEntity,
  UsedIdentityTokenEntity,
];

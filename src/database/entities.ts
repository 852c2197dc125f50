import { UserEntity } from '../users/user.entity.js';

/** Every TypeORM entity of the service, registered with the DataSource in one place. */
export const ENTITIES = [UserEntity];

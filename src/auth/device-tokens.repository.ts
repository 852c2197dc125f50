import { Injectable } from '@nestjs/common';
import { InjectDataSource, InjectRepository } from '@nestjs/typeorm';
import { DataSource, EntityManager, Repository } from 'typeorm';
import { DeviceTokenEntity, type DeviceEnvironment } from './device-token.entity.js';

/** A device token row with whether the login that registered it is still live. */
export interface HeldDeviceToken {
  device: DeviceTokenEntity;
  holderSessionLive: boolean;
}

export interface DeviceHolder {
  userId: number;
  sessionId: string;
}

@Injectable()
export class DeviceTokensRepository {
  constructor(
    @InjectRepository(DeviceTokenEntity) private readonly devices: Repository<DeviceTokenEntity>,
    @InjectDataSource() private readonly dataSource: DataSource,
  ) {}

  /** Runs `work` in a transaction; the device token rows it locks stay locked until it ends. */
  transaction<T>(work: (manager: EntityManager) => Promise<T>): Promise<T> {
    return this.dataSource.transaction(work);
  }

  /** The row of `token`, locked for update, and whether its holder's registering session is still live. */
  async findForUpdate(
    token: string,
    now: Date,
    manager: EntityManager,
  ): Promise<HeldDeviceToken | null> {
    const device = await manager
      .getRepository(DeviceTokenEntity)
      .createQueryBuilder('device')
      .setLock('pessimistic_write')
      .where('device.token = :token', { token })
      .getOne();
    if (!device) return null;
    const holderSessionLive = device.sessionId
      ? await manager
          .query<unknown[]>(
            `SELECT 1 FROM refresh_sessions s JOIN users u ON u.id = s.user_id
            WHERE s.id = $1 AND s.user_id = $2 AND s.revoked_at IS NULL AND s.expires_at > $3 AND u.is_active`,
            [device.sessionId, device.userId, now],
          )
          .then((rows) => rows.length > 0)
      : false;
    return { device, holderSessionLive };
  }

  /** Inserts the token for its holder; null when the token exists already (a concurrent registration). */
  async insertIfAbsent(
    token: string,
    environment: DeviceEnvironment,
    holder: DeviceHolder,
    manager: EntityManager,
  ): Promise<DeviceTokenEntity | null> {
    const result = await manager
      .createQueryBuilder()
      .insert()
      .into(DeviceTokenEntity)
      .values({
        token,
        environment,
        isActive: true,
        userId: holder.userId,
        sessionId: holder.sessionId,
      })
      .orIgnore()
      .returning('*')
      .execute();
    if (!(result.raw as unknown[]).length) return null;
    return manager.getRepository(DeviceTokenEntity).findOneByOrFail({ token });
  }

  /** Gives the token to `holder` (the same user again, or a new one), active, with this environment. */
  async assign(
    device: DeviceTokenEntity,
    environment: DeviceEnvironment,
    holder: DeviceHolder,
    manager: EntityManager,
  ): Promise<DeviceTokenEntity> {
    device.environment = environment;
    device.isActive = true;
    device.userId = holder.userId;
    device.sessionId = holder.sessionId;
    return manager.getRepository(DeviceTokenEntity).save(device);
  }

  /** Removes the token when `userId` holds it; false when it does not exist or belongs to someone else. */
  async deleteOwned(token: string, userId: number): Promise<boolean> {
    const result = await this.devices.delete({ token, userId });
    return (result.affected ?? 0) > 0;
  }
}

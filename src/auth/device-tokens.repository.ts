import { Injectable } from '@nestjs/common';
import { Database, type Sql, type Transaction } from '../database/database.js';
import {
  DEVICE_TOKEN_COLUMNS,
  type DeviceEnvironment,
  type DeviceToken,
} from './device-token.row.js';

/** A device token row with whether the login that registered it is still live. */
export interface HeldDeviceToken {
  device: DeviceToken;
  holderSessionLive: boolean;
}

export interface DeviceHolder {
  userId: number;
  sessionId: string;
}

/** Every query of `device_tokens` (the notification worker's reads are in NotificationJobsRepository). */
@Injectable()
export class DeviceTokensRepository {
  constructor(private readonly db: Database) {}

  /** Runs `work` in a transaction; the device token rows it locks stay locked until it ends. */
  transaction<T>(work: (tx: Transaction) => Promise<T>): Promise<T> {
    return this.db.transaction(work);
  }

  /** The row of `token`, locked for update, and whether its holder's registering session is still live. */
  async findForUpdate(token: string, now: Date, tx: Transaction): Promise<HeldDeviceToken | null> {
    const [device] = await tx.query<DeviceToken[]>(
      `SELECT ${DEVICE_TOKEN_COLUMNS} FROM device_tokens d WHERE d.token = $1 FOR UPDATE`,
      [token],
    );
    if (!device) return null;
    // Read after the lock is held: the holder's session as it is now, not as it was before waiting.
    const holderSessionLive = device.sessionId
      ? await tx
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
    tx: Sql,
  ): Promise<DeviceToken | null> {
    const rows = await tx.query<DeviceToken[]>(
      `INSERT INTO device_tokens AS d (token, environment, is_active, user_id, session_id)
       VALUES ($1, $2, true, $3, $4)
       ON CONFLICT DO NOTHING
       RETURNING ${DEVICE_TOKEN_COLUMNS}`,
      [token, environment, holder.userId, holder.sessionId],
    );
    return rows[0] ?? null;
  }

  /**
   * Gives the token to `holder` (the same user again, or a new one), active, with this environment. `updated_at`
   * moves only when something changed.
   */
  async assign(
    device: DeviceToken,
    environment: DeviceEnvironment,
    holder: DeviceHolder,
    tx: Sql,
  ): Promise<DeviceToken> {
    const [rows] = await tx.query<[DeviceToken[], number]>(
      `UPDATE device_tokens AS d
          SET environment = $2, is_active = true, user_id = $3, session_id = $4, updated_at = CURRENT_TIMESTAMP
        WHERE d.id = $1 AND (d.environment, d.is_active, d.user_id, d.session_id)
              IS DISTINCT FROM ($2::varchar, true, $3::integer, $4::uuid)
        RETURNING ${DEVICE_TOKEN_COLUMNS}`,
      [device.id, environment, holder.userId, holder.sessionId],
    );
    return (
      rows[0] ?? {
        ...device,
        environment,
        isActive: true,
        userId: holder.userId,
        sessionId: holder.sessionId,
      }
    );
  }

  /** Removes the token when `userId` holds it; false when it does not exist or belongs to someone else. */
  async deleteOwned(token: string, userId: number): Promise<boolean> {
    const [, affected] = await this.db.query<[unknown, number]>(
      'DELETE FROM device_tokens WHERE token = $1 AND user_id = $2',
      [token, userId],
    );
    return affected > 0;
  }
}

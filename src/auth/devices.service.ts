import { Injectable } from '@nestjs/common';
import type { AuthUser } from '../common/auth/auth-user.js';
import { Clock } from '../common/clock.js';
import { ConflictError, NotFoundError } from '../common/errors/domain-errors.js';
import { toDeviceResponse } from './auth.mapper.js';
import { AUTH_MESSAGES } from './auth.messages.js';
import { DeviceTokensRepository } from './device-tokens.repository.js';
import type { DeviceResponse } from './dto/device.response.js';
import type { RegisterDeviceDto } from './dto/register-device.dto.js';

export interface DeviceRegistration {
  /** False when the caller already held the token (its environment was updated). */
  created: boolean;
  device: DeviceResponse;
}

/**
 * Push device tokens. A token belongs to one user at a time and is tied to the session that registered it; while
 * that session is live, another account cannot take the token over (409). Once it is revoked or expired (a
 * password change elsewhere, deletion) or the token was unregistered, the token moves to whoever registers it.
 */
@Injectable()
export class DevicesService {
  constructor(
    private readonly devices: DeviceTokensRepository,
    private readonly clock: Clock,
  ) {}

  async register(caller: AuthUser, dto: RegisterDeviceDto): Promise<DeviceRegistration> {
    const holder = { userId: caller.id, sessionId: caller.sessionId };
    const now = this.clock.date();
    for (let attempt = 0; attempt < 3; attempt += 1) {
      const outcome = await this.devices.transaction(async (tx) => {
        const held = await this.devices.findForUpdate(dto.token, now, tx);
        if (!held) {
          const inserted = await this.devices.insertIfAbsent(
            dto.token,
            dto.environment,
            holder,
            tx,
          );
          return inserted ? { created: true, device: toDeviceResponse(inserted) } : null;
        }
        const own = held.device.userId === caller.id;
        if (!own && held.holderSessionLive)
          throw new ConflictError(AUTH_MESSAGES.deviceHeldElsewhere);
        const device = await this.devices.assign(held.device, dto.environment, holder, tx);
        return { created: !own, device: toDeviceResponse(device) };
      });
      if (outcome) return outcome;
    }
    throw new ConflictError(AUTH_MESSAGES.deviceHeldElsewhere);
  }

  async remove(caller: AuthUser, token: string): Promise<void> {
    if (!(await this.devices.deleteOwned(token, caller.id))) throw new NotFoundError();
  }
}

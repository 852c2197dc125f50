import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Repository } from 'typeorm';
import { UserEntity } from './user.entity.js';

@Injectable()
export class UsersRepository {
  constructor(@InjectRepository(UserEntity) private readonly users: Repository<UserEntity>) {}

  findById(id: number): Promise<UserEntity | null> {
    return this.users.findOneBy({ id });
  }

  /** Case-insensitive match on username or email, as login and staff creation use them. */
  findByUsernameOrEmail(identifier: string): Promise<UserEntity | null> {
    return this.users
      .createQueryBuilder('user')
      .where('lower(user.username) = lower(:identifier) OR lower(user.email) = lower(:identifier)', { identifier })
      .orderBy('(lower(user.username) = lower(:identifier))', 'DESC')
      .getOne();
  }

  findByUsername(username: string): Promise<UserEntity | null> {
    return this.users.createQueryBuilder('user').where('lower(user.username) = lower(:username)', { username }).getOne();
  }

  findByEmail(email: string): Promise<UserEntity | null> {
    return this.users.createQueryBuilder('user').where('lower(user.email) = lower(:email)', { email }).getOne();
  }

  save(user: UserEntity): Promise<UserEntity> {
    return this.users.save(user);
  }

  create(values: Partial<UserEntity>): UserEntity {
    return this.users.create(values);
  }

  count(): Promise<number> {
    return this.users.count();
  }
}

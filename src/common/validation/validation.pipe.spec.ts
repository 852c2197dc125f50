import type { ArgumentMetadata } from '@nestjs/common';
import type { ValidatorOptions } from 'class-validator';
import { PaginationQueryDto } from '../pagination/pagination.js';
import { ApiValidationPipe } from './validation.pipe.js';

/** The pipe, counting the objects class-validator is asked to validate. */
class CountingPipe extends ApiValidationPipe {
  validated = 0;

  protected override validate(object: object, options?: ValidatorOptions) {
    this.validated += 1;
    return super.validate(object, options);
  }
}

const query: ArgumentMetadata = { type: 'query', metatype: PaginationQueryDto };

describe('ApiValidationPipe, empty queries', () => {
  it('validates an empty query once per DTO class, then only applies its defaults', async () => {
    const pipe = new CountingPipe();
    const first = await pipe.transform({}, query);
    const second = await pipe.transform({}, query);
    expect(pipe.validated).toBe(1);
    expect(second).toBeInstanceOf(PaginationQueryDto);
    expect(second).toEqual(first);
    expect(second).toEqual({ page: 1, page_size: 20 });
    expect(second).not.toBe(first);
  });

  it('still validates every query with parameters, also after an empty one', async () => {
    const pipe = new CountingPipe();
    await pipe.transform({}, query);
    await expect(pipe.transform({ page: '2' }, query)).resolves.toEqual({ page: 2, page_size: 20 });
    await expect(pipe.transform({ page_size: '500' }, query)).rejects.toMatchObject({
      errors: [expect.objectContaining({ loc: ['query', 'page_size'] })],
    });
    expect(pipe.validated).toBe(3);
  });

  it('keeps validating an empty body', async () => {
    const pipe = new CountingPipe();
    await pipe.transform({}, { type: 'body', metatype: PaginationQueryDto });
    await pipe.transform({}, { type: 'body', metatype: PaginationQueryDto });
    expect(pipe.validated).toBe(2);
  });
});

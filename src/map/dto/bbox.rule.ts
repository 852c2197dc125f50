import { ValidatorConstraint, type ValidatorConstraintInterface } from 'class-validator';

const NUMBER = String.raw`\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*`;
/** Four comma-separated decimal numbers. */
export const BBOX_PATTERN = new RegExp(`^${NUMBER}(,${NUMBER}){3}$`);

/** `minLng,minLat,maxLng,maxLat` as four finite numbers, or null. */
export function parseBbox(text: string): [number, number, number, number] | null {
  if (!BBOX_PATTERN.test(text)) return null;
  const values = text.split(',').map(Number);
  return values.every(Number.isFinite) ? (values as [number, number, number, number]) : null;
}

/** A well-formed box (the format itself is @Matches's job) of finite numbers with minLat ≤ maxLat. */
@ValidatorConstraint({ name: 'bboxValues' })
export class BboxValues implements ValidatorConstraintInterface {
  validate(value: unknown): boolean {
    if (typeof value !== 'string' || !BBOX_PATTERN.test(value)) return true;
    const box = parseBbox(value);
    return box !== null && box[1] <= box[3];
  }

  defaultMessage(): string {
    return 'bbox must hold finite numbers with minLat not greater than maxLat';
  }
}

import { Transform } from 'class-transformer';

/** Query strings and form fields arrive as text: "true"/"false"/"1"/"0" become booleans, anything else stays as is (and fails @IsBoolean). */
export function ToBoolean(): PropertyDecorator {
  return Transform(({ obj, key }: { obj: Record<string, unknown>; key: string }) => {
    const raw = obj[key];
    if (typeof raw !== 'string') return raw;
    const text = raw.trim().toLowerCase();
    if (text === 'true' || text === '1') return true;
    if (text === 'false' || text === '0') return false;
    return raw;
  });
}

/** Whole numbers given as text become numbers; anything else stays text (and fails @IsInt). */
export function ToInt(): PropertyDecorator {
  return Transform(({ obj, key }: { obj: Record<string, unknown>; key: string }) => {
    const raw = obj[key];
    if (typeof raw !== 'string') return raw;
    const text = raw.trim();
    return /^[-+]?\d{1,15}$/.test(text) ? Number(text) : raw;
  });
}

/** Decimal numbers given as text become numbers; anything else stays text (and fails @IsNumber). */
export function ToNumber(): PropertyDecorator {
  return Transform(({ obj, key }: { obj: Record<string, unknown>; key: string }) => {
    const raw = obj[key];
    if (typeof raw !== 'string') return raw;
    const text = raw.trim();
    return /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(text) ? Number(text) : raw;
  });
}

/** Trims text; leaves other types for the validators to refuse. */
export function Trim(): PropertyDecorator {
  return Transform(({ value }: { value: unknown }) =>
    typeof value === 'string' ? value.trim() : value,
  );
}

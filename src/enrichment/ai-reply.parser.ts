export const MAX_NAME_LENGTH = 255;
export const MAX_DESCRIPTION_LENGTH = 2000;

export interface AiSuggestion {
  name: string;
  description: string;
}

/** Why a reply was refused: a stable category, safe to store (it never quotes the reply). */
export type AiReplyProblem =
  | 'not_text'
  | 'not_json'
  | 'not_object'
  | 'unexpected_keys'
  | 'wrong_type'
  | 'empty_value'
  | 'too_long'
  | 'control_characters';

export type AiReplyResult =
  { ok: true; value: AiSuggestion } | { ok: false; problem: AiReplyProblem };

const FENCE = /^```(?:json)?[ \t]*\r?\n([\s\S]*?)\r?\n?```$/i;
// Line breaks are allowed in a description, never in a name; no other control characters anywhere.
// eslint-disable-next-line no-control-regex
const NAME_CONTROL = /[\u0000-\u001f\u007f]/;
// eslint-disable-next-line no-control-regex
const DESCRIPTION_CONTROL = /[\u0000-\u0009\u000b\u000c\u000e-\u001f\u007f]/;

const fail = (problem: AiReplyProblem): AiReplyResult => ({ ok: false, problem });
const length = (text: string) => [...text].length;

/**
 * The model's `choices[0].message.content`, accepted only as exactly `{"name": string, "description": string}`
 * (optionally inside one ```json fence). Anything else is refused as a whole: free text is never copied.
 */
export function parseAiReply(content: unknown): AiReplyResult {
  if (typeof content !== 'string') return fail('not_text');
  let text = content.trim();
  const fenced = FENCE.exec(text);
  if (fenced) text = fenced[1].trim();

  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return fail('not_json');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    return fail('not_object');

  const keys = Object.keys(parsed).sort();
  if (keys.length !== 2 || keys[0] !== 'description' || keys[1] !== 'name')
    return fail('unexpected_keys');
  const { name, description } = parsed as Record<string, unknown>;
  if (typeof name !== 'string' || typeof description !== 'string') return fail('wrong_type');

  const value = { name: name.trim(), description: description.trim() };
  if (!value.name || !value.description) return fail('empty_value');
  if (length(value.name) > MAX_NAME_LENGTH || length(value.description) > MAX_DESCRIPTION_LENGTH) {
    return fail('too_long');
  }
  if (NAME_CONTROL.test(value.name) || DESCRIPTION_CONTROL.test(value.description)) {
    return fail('control_characters');
  }
  return { ok: true, value };
}

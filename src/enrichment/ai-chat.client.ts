import { Inject, Injectable } from '@nestjs/common';
import { AppConfig } from '../config/app-config.js';
import { parseAiReply, type AiSuggestion } from './ai-reply.parser.js';
import { ENRICHMENT_OPTIONS, type EnrichmentOptions } from './enrichment.options.js';

export const SYSTEM_PROMPT = [
  'You describe public bookcases (free book-exchange points) for a directory.',
  'From the photo and the address, suggest a short proper name for the bookcase (at most a few words, no quotes)',
  'and a description of one to three sentences of what the photo shows (it also serves as the image alt text).',
  'Answer with JSON only, exactly {"name": string, "description": string}, and nothing else.',
].join(' ');

/** The largest answer body read; a chat completion with two short strings is far smaller. */
const MAX_RESPONSE_BYTES = 1_000_000;

export interface EnrichmentRequest {
  address: string;
  city: string;
  postalCode: string;
  country: string;
  jpeg: Buffer;
}

/**
 * A failed try, as a stable category (`timeout`, `http_503`, `invalid_reply:not_json`…) that is safe to store and
 * log: never the API key, never the response body.
 */
export class EnrichmentAttemptError extends Error {
  constructor(readonly category: string) {
    super(category);
    this.name = 'EnrichmentAttemptError';
  }
}

/** Thrown when the caller's signal (shutdown) aborted the call: the try neither failed nor succeeded. */
export class EnrichmentInterrupted extends Error {
  constructor() {
    super('interrupted');
    this.name = 'EnrichmentInterrupted';
  }
}

export function addressText(request: Omit<EnrichmentRequest, 'jpeg'>): string {
  return [
    `Address: ${request.address.trim() || '(none given)'}`,
    `City: ${request.city.trim()}`,
    `Postal code: ${request.postalCode.trim() || '(none given)'}`,
    `Country: ${request.country.trim()}`,
  ].join('\n');
}

/** One attempt = one `POST {AI_API_BASE_URL}/chat/completions` of an OpenAI-compatible API. */
@Injectable()
export class AiChatClient {
  constructor(
    private readonly config: AppConfig,
    @Inject(ENRICHMENT_OPTIONS) private readonly options: EnrichmentOptions,
  ) {}

  async suggest(request: EnrichmentRequest, signal: AbortSignal): Promise<AiSuggestion> {
    const ai = this.config.ai;
    if (!ai) throw new EnrichmentAttemptError('not_configured');
    const timeout = AbortSignal.timeout(this.options.requestTimeoutMs);
    const combined = AbortSignal.any([signal, timeout]);
    const body = {
      model: ai.model,
      messages: [
        { role: 'system', content: SYSTEM_PROMPT },
        {
          role: 'user',
          content: [
            { type: 'text', text: addressText(request) },
            {
              type: 'image_url',
              image_url: { url: `data:image/jpeg;base64,${request.jpeg.toString('base64')}` },
            },
          ],
        },
      ],
    };

    let payload: unknown;
    try {
      const response = await fetch(`${ai.baseUrl.replace(/\/+$/, '')}/chat/completions`, {
        method: 'POST',
        headers: {
          Authorization: `Bearer ${ai.apiKey}`,
          'Content-Type': 'application/json',
          Accept: 'application/json',
        },
        body: JSON.stringify(body),
        signal: combined,
        redirect: 'error',
      });
      if (!response.ok) {
        await response.body?.cancel().catch(() => undefined);
        throw new EnrichmentAttemptError(`http_${response.status}`);
      }
      const text = await response.text();
      if (text.length > MAX_RESPONSE_BYTES) throw new EnrichmentAttemptError('invalid_response');
      payload = JSON.parse(text);
    } catch (error) {
      if (error instanceof EnrichmentAttemptError) throw error;
      if (signal.aborted) throw new EnrichmentInterrupted();
      if (timeout.aborted) throw new EnrichmentAttemptError('timeout');
      if (error instanceof SyntaxError) throw new EnrichmentAttemptError('invalid_response');
      throw new EnrichmentAttemptError('network_error');
    }

    const content = (payload as { choices?: { message?: { content?: unknown } }[] } | null)
      ?.choices?.[0]?.message?.content;
    const reply = parseAiReply(content);
    if (!reply.ok) throw new EnrichmentAttemptError(`invalid_reply:${reply.problem}`);
    return reply.value;
  }
}

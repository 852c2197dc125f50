/**
 * Every response an e2e suite receives is checked against the OpenAPI document the BUILT app serves (written once
 * per run by test/setup/global-setup.mjs). Schemas are compiled by Ajv (with the document's components, OpenAPI's
 * `nullable` and formats); this file only finds the operation and the response of a request and reports what Ajv
 * says. test/support/app.ts records every response of every test app, and fails the test that received one the
 * document does not describe.
 */
import { readFileSync } from 'node:fs';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule, { type FormatsPlugin } from 'ajv-formats';

// ajv-formats is CommonJS: under Node's ESM its plugin is the default export's `default`.
const addFormats: FormatsPlugin =
  (addFormatsModule as unknown as { default?: FormatsPlugin }).default ??
  (addFormatsModule as unknown as FormatsPlugin);

interface MediaType {
  schema?: object;
}
interface HeaderObject {
  required?: boolean;
  schema?: object;
}
interface ResponseObject {
  description?: string;
  headers?: Record<string, HeaderObject>;
  content?: Record<string, MediaType>;
}
interface OperationObject {
  operationId?: string;
  responses: Record<string, ResponseObject>;
}
export interface OpenApiDocument {
  openapi: string;
  paths: Record<string, Record<string, OperationObject>>;
  components: { schemas: Record<string, object> };
}

export interface ObservedResponse {
  method: string;
  /** Path with query string, as the app received it. */
  url: string;
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  /** Raw body bytes. */
  body: Buffer;
}

interface Route {
  template: string;
  pattern: RegExp;
  literalSegments: number;
  item: Record<string, OperationObject>;
}

/** Paths the document does not describe on purpose: the document itself and its UI. */
const NOT_DOCUMENTED = [/^\/api\/v1\/openapi\.json$/, /^\/api\/v1\/docs(\/|$|-)/];

export class OpenApiResponseValidator {
  private readonly ajv: Ajv;
  private readonly routes: Route[];
  private readonly compiled = new Map<object, ValidateFunction>();
  /** Headers are text: this instance coerces them to the schema's type (`coerceTypes`). */
  private readonly headerAjv: Ajv;
  private readonly compiledHeaders = new Map<object, ValidateFunction>();

  constructor(readonly document: OpenApiDocument) {
    this.ajv = openApiAjv(document, false);
    this.headerAjv = openApiAjv(document, true);
    this.routes = Object.entries(document.paths)
      .map(([template, item]) => {
        const segments = template.split('/').filter(Boolean);
        const source = segments
          .map((segment) =>
            /^\{[^}]+\}$/.test(segment) ? '[^/]+' : segment.replace(/[.*+?^$()|[\]\\]/g, '\\$&'),
          )
          .join('/');
        return {
          template,
          pattern: new RegExp(`^/${source}/?$`),
          literalSegments: segments.filter((segment) => !segment.startsWith('{')).length,
          item,
        };
      })
      // Literal routes (`/libraries/mine`) win over templated ones (`/libraries/{slug}`), as in the app.
      .sort((a, b) => b.literalSegments - a.literalSegments);
  }

  static fromFile(path: string): OpenApiResponseValidator {
    return new OpenApiResponseValidator(JSON.parse(readFileSync(path, 'utf8')) as OpenApiDocument);
  }

  /** What is wrong with the response according to the document; [] when it matches (or is not the API's). */
  problems(response: ObservedResponse): string[] {
    const path = decodedPath(response.url);
    if (NOT_DOCUMENTED.some((pattern) => pattern.test(path))) return [];
    const method = response.method.toLowerCase();
    const route = this.routes.find(({ pattern, item }) => pattern.test(path) && item[method]);
    // A path the document does not have: an unknown route (404), a console page, media, or a probe route a test
    // mounts for itself. That every route the app serves is documented is test/platform/openapi's audit.
    if (!route) return [];
    const operation = route.item[method];
    const where = `${method.toUpperCase()} ${route.template}`;
    const documented =
      operation.responses[String(response.status)] ??
      operation.responses[`${String(response.status)[0]}XX`] ??
      operation.responses.default;
    if (!documented) return [`${where}: status ${response.status} is not documented`];
    const problems: string[] = [];
    for (const [name, header] of Object.entries(documented.headers ?? {})) {
      const value = response.headers[name.toLowerCase()];
      if (value === undefined) {
        if (header.required) problems.push(`${where} ${response.status}: header ${name} missing`);
        continue;
      }
      if (header.schema) {
        // A header is text: its value is read as the schema's type (Retry-After: 60 is an integer).
        const errors = this.validateHeader(header.schema, String(value));
        if (errors) problems.push(`${where} ${response.status}: header ${name}: ${errors}`);
      }
    }
    const content = documented.content;
    if (!content || Object.keys(content).length === 0) {
      if (response.body.length > 0)
        problems.push(`${where} ${response.status}: a body where the document has none`);
      return problems;
    }
    const contentType = String(response.headers['content-type'] ?? '')
      .split(';')[0]
      .trim();
    const media = content[contentType];
    if (!media) {
      problems.push(
        `${where} ${response.status}: content type "${contentType}" is not documented (${Object.keys(content).join(', ')})`,
      );
      return problems;
    }
    if (!media.schema || response.method.toUpperCase() === 'HEAD') return problems;
    if (contentType !== 'application/json') return problems;
    let body: unknown;
    try {
      body = JSON.parse(response.body.toString('utf8'));
    } catch {
      return [...problems, `${where} ${response.status}: body is not JSON`];
    }
    const errors = this.validate(media.schema, body);
    if (errors) problems.push(`${where} ${response.status}: ${errors}`);
    return problems;
  }

  private validateHeader(schema: object, value: string): string | null {
    let validate = this.compiledHeaders.get(schema);
    if (!validate) {
      validate = this.headerAjv.compile({
        type: 'object',
        properties: { header: closed(rebase(schema)) },
      });
      this.compiledHeaders.set(schema, validate);
    }
    if (validate({ header: value })) return null;
    return this.headerAjv.errorsText(validate.errors, { dataVar: 'value' });
  }

  private validate(schema: object, value: unknown): string | null {
    let validate = this.compiled.get(schema);
    if (!validate) {
      validate = this.ajv.compile(closed(rebase(schema)));
      this.compiled.set(schema, validate);
    }
    if (validate(value)) return null;
    return this.ajv.errorsText(validate.errors, { dataVar: 'body' });
  }
}

/** Ajv with OpenAPI's formats and the document's components registered as `openapi.json`. */
function openApiAjv(document: OpenApiDocument, coerceTypes: boolean): Ajv {
  const ajv = new Ajv({ strict: false, allErrors: true, discriminator: true, coerceTypes });
  addFormats(ajv);
  // OpenAPI's own formats: numeric widths and file contents carry no constraint beyond their type.
  for (const format of ['int32', 'int64', 'float', 'double', 'binary', 'byte', 'password'])
    ajv.addFormat(format, true);
  ajv.addSchema({ components: closed(document.components) }, 'openapi.json');
  return ajv;
}

/** `#/components/...` references, resolved against the document registered as `openapi.json`. */
function rebase(schema: object): object {
  return JSON.parse(
    JSON.stringify(schema).replace(
      /"\$ref":"#\/components\//g,
      '"$ref":"openapi.json#/components/',
    ),
  ) as object;
}

/**
 * The same schemas with every described object closed (`additionalProperties: false` where the document lists
 * properties and says nothing else), so that a field the document does not describe is reported too.
 */
function closed<T>(schema: T): T {
  if (Array.isArray(schema)) return schema.map(closed) as T;
  if (schema === null || typeof schema !== 'object') return schema;
  const copy: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) copy[key] = closed(value);
  if (copy.properties && typeof copy.properties === 'object' && !('additionalProperties' in copy))
    copy.additionalProperties = false;
  return copy as T;
}

/** The request's path, percent-decoded; a path that is not valid UTF-8 (hostile-input tests send them) stays raw. */
function decodedPath(url: string): string {
  const raw = new URL(url, 'http://x').pathname;
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

/**
 * A small client written only against the types openapi-typescript generates from the served document
 * (test/client/generated/openapi.ts, written by test/client/generated-client.e2e-spec.ts) and openapi-fetch: the main
 * journeys of an app, with no casts. If the document loses a parameter or field, or types one wrongly, this file
 * stops type-checking; if it lies about the API, running it fails.
 */
import createClient from 'openapi-fetch';
import type { paths } from './generated/openapi.js';

export type ApiClient = ReturnType<typeof createClient<paths>>;

export function apiClient(baseUrl: string, token?: string): ApiClient {
  return createClient<paths>({
    baseUrl,
    headers: token ? { Authorization: `Bearer ${token}` } : {},
  });
}

export async function register(client: ApiClient, username: string, password: string) {
  const { data, error } = await client.POST('/api/v1/auth/register', {
    body: { username, email: `${username}@example.org`, password },
  });
  if (!data) throw new Error(`register: ${error?.message}`);
  return data.access;
}

export async function listNear(client: ApiClient, lat: number, lng: number) {
  const { data, error } = await client.GET('/api/v1/libraries', {
    params: { query: { lat, lng, radius_km: 5, page_size: 10 } },
  });
  if (!data) throw new Error(`listNear: ${error?.message}`);
  return { slugs: data.items.map((item) => item.slug), total: data.pagination.total };
}

export async function search(client: ApiClient, q: string) {
  const { data, error } = await client.GET('/api/v1/libraries', {
    params: { query: { q, page: 1 } },
  });
  if (!data) throw new Error(`search: ${error?.message}`);
  return data.items.map((item) => item.name);
}

/** Multipart: every field a form part, the photo a file part. */
function formData(body: Record<string, unknown>): FormData {
  const form = new FormData();
  for (const [name, value] of Object.entries(body)) {
    if (value instanceof Blob) form.append(name, value, `${name}.jpg`);
    else if (value !== undefined) form.append(name, String(value));
  }
  return form;
}

export async function submit(client: ApiClient, photo: Blob) {
  const { data, error } = await client.POST('/api/v1/libraries', {
    body: {
      name: 'Lesekiste Lindenweg',
      address: 'Lindenweg 12',
      city: 'Freiburg',
      country: 'DE',
      latitude: 47.9959,
      longitude: 7.8522,
      capacity: 40,
      photo,
    },
    bodySerializer: formData,
  });
  if (!data) throw new Error(`submit: ${error?.message}`);
  return { slug: data.slug, id: data.id, capacity: data.capacity };
}

export async function favourite(client: ApiClient, slug: string) {
  const { data, error } = await client.POST('/api/v1/libraries/{slug}/favourite', {
    params: { path: { slug } },
  });
  if (!data) throw new Error(`favourite: ${error?.message}`);
  return data.message;
}

export async function me(client: ApiClient) {
  const { data, error } = await client.GET('/api/v1/auth/me');
  if (!data) throw new Error(`me: ${error?.message}`);
  return { id: data.id, username: data.username, isStaff: data.is_staff };
}

import request from 'supertest';
import type { HttpTarget, RegisteredUser } from './auth.js';

/** The CSRF token of a console page's first form. */
export function csrfOf(html: string): string {
  const match = /name="_csrf" value="([^"]+)"/.exec(html);
  if (!match) throw new Error('no _csrf field on the page');
  return match[1];
}

export type ConsoleAgent = ReturnType<typeof request.agent>;

/** Opens the sign-in form (at `formPath`) and posts it with `fields` and its CSRF token; the agent keeps cookies. */
export async function postSignInForm(
  http: HttpTarget,
  fields: Record<string, string>,
  formPath = '/admin/login',
): Promise<{ agent: ConsoleAgent; form: request.Response; res: request.Response }> {
  const agent = request.agent(http);
  const form = await agent.get(formPath);
  const res = await agent
    .post('/admin/login')
    .type('form')
    .send({ _csrf: csrfOf(form.text), ...fields });
  return { agent, form, res };
}

/** Signs in to the staff console through its form; answers a cookie-keeping agent and the session's CSRF token. */
export async function signInConsole(
  http: HttpTarget,
  user: RegisteredUser,
): Promise<{ agent: ConsoleAgent; csrf: string }> {
  const agent = request.agent(http);
  const form = await agent.get('/admin/login');
  const res = await agent
    .post('/admin/login')
    .type('form')
    .send({
      _csrf: csrfOf(form.text),
      username: user.username,
      password: user.password,
      next: '/admin',
    });
  if (res.status !== 303) throw new Error(`signInConsole: sign-in answered ${res.status}`);
  const dashboard = await agent.get('/admin');
  if (dashboard.status !== 200)
    throw new Error(`signInConsole: /admin answered ${dashboard.status}`);
  return { agent, csrf: csrfOf(dashboard.text) };
}

import { createConfig, lintFromString } from '@redocly/openapi-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApi, type TestApi } from '../support/api.js';

let api: TestApi;
let document: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- an OpenAPI document

beforeAll(async () => {
  api = await startApi();
  const reply = await api.request('GET', '/api/v1/schema/');
  expect(reply.status).toBe(200);
  document = reply.json;
});
afterAll(() => api.close());

/** Every path Fastify routes, from its route tree (`:id` written `{id}`). */
function routedPaths(): string[] {
  const paths: string[] = [];
  const stack: string[] = [];
  for (const line of api.app.printRoutes({ commonPrefix: false }).split('\n')) {
    const match = /^([│ ]*)[├└]── (\S+) \(/.exec(line);
    if (!match) continue;
    const depth = match[1]!.length / 4;
    stack.length = depth;
    stack.push(match[2]!);
    paths.push(stack.join('').replace(/:(\w+)/g, '{$1}'));
  }
  return paths;
}

describe('the OpenAPI document', () => {
  it('is OpenAPI 3.1 and passes the Redocly linter with no errors', async () => {
    expect(document.openapi).toBe('3.1.0');
    // The contract's paths end in a slash (SPEC §2), so that one style rule is off.
    const config = await createConfig({ extends: ['recommended'], rules: { 'no-path-trailing-slash': 'off' } });
    const problems = await lintFromString({ source: JSON.stringify(document), absoluteRef: 'openapi.json', config });
    const errors = problems.filter((problem) => problem.severity === 'error');
    expect(errors.map((problem) => `${problem.ruleId}: ${problem.message} at ${problem.location[0]?.pointer}`)).toEqual([]);
  });

  it('documents every route Fastify serves (slashed form), apart from the docs UI and page assets', () => {
    const documented = new Set(Object.keys(document.paths));
    for (const path of routedPaths()) {
      if (path.startsWith('/api/docs') || path.startsWith('/api/static/')) continue;
      const slashed = path.startsWith('/api/v1') && !path.endsWith('/') ? `${path}/` : path;
      expect(documented, path).toContain(slashed);
    }
  });

  it('documents exactly the methods each path answers (the rest are 405)', async () => {
    const admin = await api.user('root', { superuser: true });
    for (const [path, operations] of Object.entries<Record<string, unknown>>(document.paths)) {
      if (!path.startsWith('/api/v1/')) continue;
      const url = path.replace('{id}', '999999');
      for (const method of ['get', 'post', 'put', 'patch', 'delete']) {
        const reply = await api.request(method.toUpperCase(), url, { token: admin.token, body: method === 'get' || method === 'delete' ? undefined : {} });
        expect(reply.status === 405, `${method} ${path}`).toBe(!(method in operations));
      }
    }
  });

  it('describes list parameters, bodies, responses and security from the declarations', () => {
    const list = document.paths['/api/v1/users/'].get;
    const parameters = Object.fromEntries(list.parameters.map((parameter: { name: string }) => [parameter.name, parameter]));
    for (const name of ['page', 'page_size', 'search', 'ordering', 'username__icontains', 'date_joined__range', 'is_active', 'id__in']) {
      expect(parameters, name).toHaveProperty(name);
    }
    expect(parameters).not.toHaveProperty('password');
    expect(parameters.ordering.description).toContain('Allowed: id, username, email, date_joined');
    expect(Object.keys(list.responses).sort()).toEqual(['200', '400', '401', '403', '404', '406', '414', '429', '500', '503']);

    const create = document.paths['/api/v1/users/'].post;
    const createBody = create.requestBody.content['application/json'].schema;
    expect(createBody.required).toEqual(['username', 'password']);
    const put = document.paths['/api/v1/users/{id}/'].put.requestBody.content['application/json'].schema;
    expect(put.required).toEqual(['username']);
    const patch = document.paths['/api/v1/users/{id}/'].patch.requestBody.content['application/json'].schema;
    expect(patch.required).toEqual([]);
    expect(create.responses).toHaveProperty('201');
    expect(create.responses).toHaveProperty('415');

    const record = create.responses['201'].content['application/json'].schema;
    expect(Object.keys(record.properties)).toEqual(['id', 'username', 'email', 'is_active', 'date_joined', 'password']);
    expect(record.properties.password.type).toBe('null');
    const article = document.paths['/api/v1/articles/{id}/'].get.responses['200'].content['application/json'].schema;
    expect(Object.keys(article.properties.author.anyOf[0].properties)).toEqual(['id', 'username']);

    expect(Object.keys(document.components.securitySchemes).sort()).toEqual(['jwt', 'session', 'token']);
    expect(document.components.schemas.ErrorEnvelope.required).toEqual(['error', 'code']);
  });
});

describe('interactive documentation', () => {
  it('serves Swagger UI from the installed package, pointed at the document', async () => {
    const page = await api.request('GET', '/api/docs/');
    expect(page.status).toBe(200);
    expect(page.body).toContain('swagger-ui');
    expect(page.body).not.toMatch(/https?:\/\/(?!localhost)[^"']*\.(js|css)/);
    const initializer = await api.request('GET', '/api/docs/static/swagger-initializer.js');
    expect(initializer.body).toContain('/api/v1/schema/');
    const bundle = await api.request('GET', '/api/docs/static/swagger-ui-bundle.js');
    expect(bundle.status).toBe(200);
  });
});

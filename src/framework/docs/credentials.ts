/** What the OpenAPI document says of an action's credential: optional where its checks let anyone through. */
import type { FastifySchema } from 'fastify';
import type { Collection } from '../declare/collection.js';
import { credentialsFor } from './openapi.js';
import type { Action, Permission } from '../declare/permissions.js';
import { permissionsFor, type ApiRuntime } from '../views.js';

export const documentedCredentials = (runtime: ApiRuntime, collection: Collection, action: Action, own?: readonly Permission[]): FastifySchema =>
  credentialsFor(
    runtime.authenticators.map(({ kind }) => kind),
    permissionsFor(runtime, collection, action, own),
    action,
  );

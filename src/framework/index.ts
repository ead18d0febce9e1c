/**
 * Restfold's public API: everything an application needs, and nothing else.
 */
export { defineApp, buildApp, migrateApp, API_PREFIX } from './app.js';
// The types an app's own routes need, so that an app never installs Fastify to write them.
export type { FastifyInstance, FastifyReply, FastifyRequest, FastifySchema, RouteHandlerMethod } from 'fastify';
export type { AppContext, AppDefinition } from './app.js';
export { requirePermissions, throttleRequest } from './app-routes.js';
export { collection } from './collection.js';
export type { CustomAction, CustomActionContext } from './custom-actions.js';
export type { Collection, CollectionOptions } from './collection.js';
export { loadConfig, loadDotEnv } from './config.js';
export type { Config } from './config.js';
export type { ScopedRates } from './throttling.js';
export { ApiError, notAuthenticated, notFound, parseError, permissionDenied, validationFailed } from './errors.js';
export type { ErrorCode, ErrorDetails } from './errors.js';
export { Day, FieldError, lookups, parseInteger64 } from '../core/fields.js';
export type { DefaultContext, Field, Lookup, ValueType } from '../core/fields.js';
export { fields } from './fields.js';
export { model } from './model.js';
export type { Model, ModelRules, RecordUpdate, UpdateRules } from './model.js';
export { allowAny, anyOf, hasPermission, isAuthenticated, isOwner, readActions } from './permissions.js';
export type { Action, Permission, PermissionContext } from './permissions.js';
export { parseRecordId } from './record-id.js';
export { recordStore } from './record-store.js';
export type { RecordId, RecordStore, RecordStoreOptions } from './record-store.js';
export { Serializer, serializer } from './serializer.js';
export { computed } from './computed.js';
export type { ComputedField, RenderContext } from './computed.js';
export type { NestedField, ObjectContext, ObjectErrors, SerializerOptions } from './serializer.js';
export type { RequestContext, Scope, ScopeConditions } from './scope.js';
export type { CommitEvent, CreateEvent, DeleteEvent, Hooks, UpdateEvent, Written } from './hooks.js';
export type { Condition, Filter } from '../core/list-query.js';
export { storeCondition } from '../store/conditions.js';
export type { StoreExpression } from '../store/conditions.js';
export type { Row } from '../core/rows.js';
export { serve, openConfiguredDatabase } from './server.js';
export { mountSimpleRoutes, readJsonBody, sendJsonArray } from './simple-routes.js';
export type { SimpleEndpoint, SimpleHandler, SimpleMethod, SimpleRoutes } from './simple-routes.js';
export { errorResponses, inputSchema, recordSchema, textErrorResponses } from './openapi.js';
export { User } from './users/model.js';
export type { AuthUser } from './authentication/auth-user.js';
export { openDatabase } from '../store/database.js';
export type { Database, Dialect } from '../store/database.js';
export { trigramIndexes } from '../store/migrations.js';
export type { MigrationStep, Migrations, SqlTypes, TrigramIndex } from '../store/migrations.js';

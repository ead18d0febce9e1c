/**
 * Restfold's public API: everything an application needs, and nothing else.
 */
export { defineApp, buildApp, migrateApp, API_PREFIX } from './app.js';
export type { AppContext, AppDefinition } from './app.js';
export { collection } from './collection.js';
export type { Collection, CollectionOptions } from './collection.js';
export { loadConfig, loadDotEnv } from './config.js';
export type { Config } from './config.js';
export { ApiError, notFound, parseError, validationFailed } from './errors.js';
export type { ErrorCode, ErrorDetails } from './errors.js';
export { Day, FieldError, fields, lookups, parseInteger64 } from './fields.js';
export type { DefaultContext, Field, Lookup, ValueType } from './fields.js';
export { model } from './model.js';
export type { Model } from './model.js';
export { allowAny, anyOf, hasPermission, isAuthenticated, isOwner } from './permissions.js';
export type { Action, Permission, PermissionContext } from './permissions.js';
export { parseRecordId, recordStore } from './record-store.js';
export type { RecordId, RecordStore, RecordStoreOptions } from './record-store.js';
export { Serializer, serializer } from './serializer.js';
export type { NestedField, Row, SerializerOptions } from './serializer.js';
export { serve, openConfiguredDatabase } from './server.js';
export { mountSimpleRoutes, readJsonBody } from './simple-routes.js';
export type { SimpleEndpoint, SimpleHandler, SimpleMethod, SimpleRoutes } from './simple-routes.js';
export { errorResponses, inputSchema, recordSchema, textErrorResponses } from './openapi.js';
export { User } from './authentication/users.js';
export type { AuthUser } from './authentication/users.js';
export { openDatabase } from '../store/database.js';
export type { Database, Dialect } from '../store/database.js';
export type { MigrationStep, Migrations, SqlTypes } from '../store/migrations.js';

/**
 * Restfold's public API: everything an application needs, and nothing else.
 */
export { buildApp } from './app/app.js';
export { defineApp, migrateApp, migrateFrameworkAndApp } from './app/definition.js';
// The types an app's own routes need, so that an app never installs Fastify to write them.
export type { FastifyInstance, FastifyReply, FastifyRequest, FastifySchema, RouteHandlerMethod } from 'fastify';
export type { AppContext, AppDefinition, AppliedMigrations } from './app/definition.js';
export { emptyAppTables } from './app/definition.js';
export type { ForcedUser } from './stages/authentication/index.js';
export { requirePermissions, throttleRequest } from './toolkit/app-routes.js';
export { collection } from './declare/collection.js';
export type { ActionBody, ActionWhere, CustomAction, CustomActionContext, HandlerAction, WhereAction } from './declare/custom-action.js';
export type { AutomaticIndexes, BulkDelete, Collection, CollectionOptions, LiveOptions, Pagination, SerializerChoice, SerializerContext, Singleton } from './declare/collection.js';
export type { Parent } from './declare/collection.js';
export type { ErrorResponse, ExceptionHandler, TrailingSlash } from './base/style.js';
export type { RouterDefinition } from './routing/routers.js';
export type { VersionScheme, VersionsDeclaration } from './stages/versioning.js';
export { drfExceptionHandler } from './render/drf-errors.js';
export { csvRenderer } from './render/csv.js';
export type { Renderer, RenderInput } from './declare/renderer.js';
export type { Envelope } from './declare/collection.js';
export { loadConfig, loadDotEnv } from './app/config.js';
export type { Config } from './app/config.js';
export type { HistoryKept } from './write/change-log.js';
export type { BucketRates } from './stages/throttling.js';
export { ApiError, MalformedPathId, notAuthenticated, notFound, parseError, permissionDenied, validationFailed } from './base/errors.js';
export type { ErrorCode, ErrorDetails } from './base/errors.js';
export { Day, FieldError, lookups, parseInteger64 } from '../core/fields.js';
export type { DefaultContext, Field, FieldLimits, Lookup, Validator, ValidatorAnswer, ValueType } from '../core/fields.js';
export type { IntegerOptions, RangeOptions, StringOptions, TimestampOptions } from '../core/fields.js';
export type { BigintOptions, ChoiceOptions, ChoiceStringOptions, DecimalOptions, DurationOptions, FloatOptions, JsonOptions, TextRangeOptions } from '../core/field-kinds.js';
export { fields } from './declare/fields.js';
export type { FileOptions, ImageOptions, StoredFile } from '../core/file-fields.js';
export { model } from './declare/model.js';
export type { Model, ModelRules, RecordUpdate, UpdateRules } from './declare/model.js';
export { allowAny, anyOf, hasPermission, isAuthenticated, isOwner, modelPermissionNames, modelPermissions, readActions } from './declare/permission-classes.js';
export type { Action, Permission, PermissionContext, RecordConditions } from './declare/permission-classes.js';
export { parseRecordId } from './declare/record-id.js';
export { lockFor, recordStore } from './toolkit/record-store.js';
export { F, increment, FieldExpression, Increment, type Operand } from '../core/expressions.js';
export { inTransaction } from './write/unit.js';
export type { GetOptions, GotOrCreated, RecordId, RecordStore, RecordStoreOptions } from './toolkit/record-store.js';
export { Serializer, serializer } from './declare/serializer.js';
export { computed } from './declare/computed.js';
export { joinTable, relations } from './declare/relations.js';
export type { JoinTable, Relation } from './declare/serializer.js';
export type { AggregateOptions, AggregateVisibility, ComputedField, RecordLinks, RelatedOptions, RenderContext, Through } from './declare/computed.js';
export type { NestedField, ObjectContext, ObjectErrors, ObjectValidator, SerializerOptions } from './declare/serializer.js';
export type { RequestContext, Scope, ScopeConditions } from './declare/scope.js';
export type { CommitEvent, CreateEvent, DeleteEvent, HookContext, Hooks, UpdateEvent, Written } from './declare/hooks.js';
export type { Condition, Filter } from '../core/list-query.js';
export { storeCondition } from '../store/conditions/store-condition.js';
export type { StoreExpression } from '../store/conditions/store-condition.js';
export type { Row } from '../core/rows.js';
export { serve, openConfiguredDatabase } from './app/server.js';
export { mountSimpleRoutes, readJsonBody, sendJsonArray } from './routing/simple-routes.js';
export type { SimpleEndpoint, SimpleHandler, SimpleMethod, SimpleRoutes } from './routing/simple-routes.js';
export { ANONYMOUS, errorResponses, inputSchema, recordSchema, textErrorResponses } from './docs/openapi.js';
export { User } from './declare/users/user-model.js';
export { modelAdmin } from './admin/declare.js';
export type { AdminOptions, ModelAdmin, ModelAdminOptions } from './admin/declare.js';
// Users and groups made by code as `restfold createuser` and `restfold groups` make them (a test kit, a seed script, an app's own code).
export {
  AdminInputError,
  addToGroups,
  createGroup,
  createUser,
  grantGroupPermissions,
  grantPermissions,
  removeFromGroups,
  revokeGroupPermissions,
  revokePermissions,
  type NewUser,
} from './app/admin.js';
export type { UserModel, UserModelOptions } from './declare/users/user-model.js';
export type { CredentialCheck, Credentials } from './declare/credentials.js';
export type { AuthUser } from './base/auth-user.js';
export { openDatabase } from '../store/connection/database.js';
export { createIsolatedSchema, sweepIsolatedSchemas } from '../store/connection/isolated-schema.js';
export type { IsolatedSchema } from '../store/connection/isolated-schema.js';
// Tokens as `restfold token create` makes them.
export { createToken } from './stages/authentication/token.js';
export type { Database, Dialect } from '../store/connection/database.js';
export { migration, operations } from '../store/schema/operations.js';
export type { Migration, MigrationStep, Migrations, Operation, RowsMove, SqlTypes } from '../store/schema/migrations.js';
export type {
  CheckConstraint,
  Column,
  ColumnType,
  ConstraintFacts,
  ConstraintValue,
  FieldReference,
  IndexFacts,
  OnDelete,
  RowCondition,
  SchemaState,
  TableFacts,
  UniqueConstraint,
} from '../core/schema.js';
export { appBaseline, appState, assertSchemaMatches, declaredSchemaDifferences, SchemaMismatch } from './app/declared-schema.js';
export { planMigration, writeMigration } from './app/makemigrations.js';
export { loadMigrations } from './app/migration-folder.js';
export type { MigrationFolder, MigrationPlan, Renames } from './app/makemigrations.js';

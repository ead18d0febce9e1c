/**
 * restfold/testing: the test kit. An app built in-process on a database of its own (testApp), a
 * client through its whole pipeline, users, live streams, and assertions whose failures name the
 * request. Works with node --test (through tsx for TypeScript) and with Vitest: docs/testing-your-app.md.
 */
export { testApp } from './test-app.js';
export type { NewTestUser, TestApp, TestAppOptions, TestUser } from './test-app.js';
export { TestClient } from './client.js';
export type { QueryValue, RequestOptions, UserLike } from './client.js';
export { describeResponse, expectStatus } from './responses.js';
export type { Headers, TestResponse } from './responses.js';
export type { LiveEvent, LiveEvents } from './live-events.js';

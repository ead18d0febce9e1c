/**
 * A plugin that works on the app itself rather than in an encapsulated instance
 * of its own: its hooks, handlers and routes apply to every route registered
 * after it, in the order the plugins are registered. Fastify's documented
 * `skip-override` mark, which is what the fastify-plugin package sets. The name
 * is the one `app.printPlugins()` and Fastify's errors show (an arrow function
 * has none).
 */
import type { FastifyPluginAsync } from 'fastify';

export function appWide<Options extends object = Record<never, never>>(name: string, plugin: FastifyPluginAsync<Options>): FastifyPluginAsync<Options> {
  Object.defineProperty(plugin, 'name', { value: name });
  return Object.assign(plugin, { [Symbol.for('skip-override')]: true });
}

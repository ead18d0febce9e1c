/**
 * Each request's logger (`request.log`), its request id bound. pino makes a
 * child logger by serialising the bindings through the redaction paths, a cost
 * paid on every request (docs/performance.md); most requests write no line
 * (none at LOG_LEVEL=warn), so the child is made when the first line is written.
 */
import type { FastifyBaseLogger, FastifyServerOptions } from 'fastify';

type Bindings = Parameters<FastifyBaseLogger['child']>[0];
type ChildOptions = NonNullable<Parameters<FastifyBaseLogger['child']>[1]>;
type Write = (...parts: unknown[]) => void;

const LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

class LazyChildLogger implements FastifyBaseLogger {
  #child: FastifyBaseLogger | undefined;
  // One method per level, each handing its line to the child (defined below the class).
  declare fatal: Write;
  declare error: Write;
  declare warn: Write;
  declare info: Write;
  declare debug: Write;
  declare trace: Write;
  declare silent: Write;

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Bindings,
    private readonly options: ChildOptions,
  ) {}

  get logger(): FastifyBaseLogger {
    return (this.#child ??= this.parent.child(this.bindings, this.options));
  }

  get level(): string {
    return this.#child?.level ?? this.options.level ?? this.parent.level;
  }

  set level(level: string) {
    this.logger.level = level;
  }

  child(bindings: Bindings, options?: ChildOptions): FastifyBaseLogger {
    return this.logger.child(bindings, options);
  }
}

for (const level of LEVELS) {
  LazyChildLogger.prototype[level] = function (this: LazyChildLogger, ...parts: unknown[]) {
    (this.logger[level] as Write)(...parts);
  };
}

export const lazyChildLogger: NonNullable<FastifyServerOptions['childLoggerFactory']> = (logger, bindings, options) => new LazyChildLogger(logger, bindings, options);

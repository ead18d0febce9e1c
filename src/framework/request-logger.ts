/**
 * Each request's logger (`request.log`), its request id bound. pino makes a
 * child logger by serialising the bindings through the redaction paths, a few
 * microseconds per request; most requests write no line (none at
 * LOG_LEVEL=warn), so the child is made when the first line is written.
 */
import type { FastifyBaseLogger, FastifyServerOptions } from 'fastify';

type Bindings = Parameters<FastifyBaseLogger['child']>[0];
type ChildOptions = NonNullable<Parameters<FastifyBaseLogger['child']>[1]>;
type Write = (...parts: unknown[]) => void;

class LazyChildLogger implements FastifyBaseLogger {
  #child: FastifyBaseLogger | undefined;

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Bindings,
    private readonly options: ChildOptions,
  ) {}

  private get logger(): FastifyBaseLogger {
    return (this.#child ??= this.parent.child(this.bindings, this.options));
  }

  get level(): string {
    return this.#child?.level ?? this.options.level ?? this.parent.level;
  }

  set level(level: string) {
    this.logger.level = level;
  }

  fatal(...parts: unknown[]): void {
    (this.logger.fatal as Write)(...parts);
  }

  error(...parts: unknown[]): void {
    (this.logger.error as Write)(...parts);
  }

  warn(...parts: unknown[]): void {
    (this.logger.warn as Write)(...parts);
  }

  info(...parts: unknown[]): void {
    (this.logger.info as Write)(...parts);
  }

  debug(...parts: unknown[]): void {
    (this.logger.debug as Write)(...parts);
  }

  trace(...parts: unknown[]): void {
    (this.logger.trace as Write)(...parts);
  }

  silent(...parts: unknown[]): void {
    (this.logger.silent as Write)(...parts);
  }

  child(bindings: Bindings, options?: ChildOptions): FastifyBaseLogger {
    return this.logger.child(bindings, options);
  }
}

export const lazyChildLogger: NonNullable<FastifyServerOptions['childLoggerFactory']> = (logger, bindings, options) => new LazyChildLogger(logger, bindings, options);

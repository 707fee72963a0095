/**
 * The one kind of start-up refusal. Configuration, the database, the data
 * directory, the encryption key and the listeners all raise it, so it lives
 * apart from any of them: a module that refuses to start need not depend on
 * the configuration schema.
 */

/**
 * Raised when the environment holds a value the service cannot run with, or
 * names something it cannot use (a port in use, a database that does not
 * answer, a data directory it cannot write): start-up prints the message, one
 * line that names the variable, and exits with code 2.
 */
export class ConfigError extends Error {
  override name = "ConfigError";
}

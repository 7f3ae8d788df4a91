import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { ConfigError } from "../core/errors.js";

/** The name `roomgate init` writes and the default search looks for. */
export const CONFIG_NAME = "roomgate.yaml";

/**
 * Where a configuration is looked for when no `-c` is given, in order: the current
 * folder, the user's config home (`$XDG_CONFIG_HOME`, default `~/.config`), then the
 * system's (`/etc/roomgate`, where the systemd unit and the image keep it).
 */
export function defaultConfigPaths(env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): string[] {
  const configHome = env.XDG_CONFIG_HOME || join(env.HOME || homedir(), ".config");
  return [
    join(cwd, CONFIG_NAME),
    join(configHome, "roomgate", CONFIG_NAME),
    join("/etc/roomgate", CONFIG_NAME),
  ];
}

/** The configuration file to use: the one given, or the first default that exists. */
export function resolveConfigFile(given: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  if (given !== undefined) return given;
  const candidates = defaultConfigPaths(env);
  const found = candidates.find((path) => existsSync(path));
  if (found) return found;
  throw new ConfigError(
    `no configuration file: none of ${candidates.join(", ")} exists; ` +
      "write one with `roomgate init`, or name one with -c FILE",
  );
}

/** The configuration file, when one is given or found; undefined otherwise. */
export function findConfigFile(
  given: string | undefined,
  env: NodeJS.ProcessEnv = process.env,
): string | undefined {
  if (given !== undefined) return given;
  return defaultConfigPaths(env).find((path) => existsSync(path));
}

/**
 * Loads a `.env` file into the environment; what the environment already has wins
 * (a supervisor's settings are not overridden). The file is `--env-file` when given
 * (then it must exist), else `.env` beside the configuration, else `.env` here.
 * Returns the file loaded, if any.
 */
export function loadEnvFile(given: string | undefined, configFile: string | undefined): string | undefined {
  if (given !== undefined) {
    if (!existsSync(given)) throw new ConfigError(`--env-file ${given}: no such file`);
    return load(given);
  }
  const beside = configFile === undefined ? undefined : join(dirname(resolve(configFile)), ".env");
  const file = [beside, resolve(".env")].find((path) => path !== undefined && existsSync(path));
  return file === undefined ? undefined : load(file);
}

function load(file: string): string {
  try {
    process.loadEnvFile(file);
    return file;
  } catch (err) {
    throw new ConfigError(`cannot read the environment file ${file}: ${(err as Error).message}`, {
      cause: err,
    });
  }
}

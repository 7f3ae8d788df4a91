import type { IncomingMessage, ServerResponse } from "node:http";

/** A failure the stand-in answers instead of handling the next matching requests. */
export interface InjectedFailure {
  status: number;
  errcode?: string;
  retryAfterMs?: number;
  /** Which requests fail, by path; default: event sends. */
  path?: RegExp;
}

/** One request the stand-in answered, for assertions. */
export interface StandinRequest {
  method: string;
  path: string;
  status: number;
  userId?: string;
}

/** A Matrix error answer: the status, errcode and any extra fields (such as retry_after_ms) of the body. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly errcode: string,
    message: string,
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

/** One authenticated request as a handler sees it, with the `:name` parts of its path in order. */
export interface Call {
  method: string;
  params: string[];
  query: URLSearchParams;
  body: Buffer;
  json: Record<string, unknown>;
  userId: string;
  token: string;
  req: IncomingMessage;
}

/** A handler's answer: JSON by default, or raw bytes for media. */
export type Reply = { status?: number; json?: unknown; raw?: { data: Buffer; contentType: string } };

type Handler = (call: Call) => Promise<Reply> | Reply;

interface Route {
  method: string;
  parts: string[];
  handler: Handler;
}

/** The stand-in's route table: the first route whose method and path pattern match handles a request. */
export class StandinRouter {
  private readonly routes: Route[] = [];

  /** Adds a route; `:name` parts of `pattern` match any one path segment. */
  add(method: string, pattern: string, handler: Handler): void {
    this.routes.push({ method, parts: pattern.split("/"), handler });
  }

  /** The route for a request and its decoded path parameters, or a 404 M_UNRECOGNIZED. */
  match(method: string, pathname: string): { handler: Handler; params: string[] } {
    const parts = pathname.split("/");
    for (const route of this.routes) {
      if (route.method !== method || route.parts.length !== parts.length) continue;
      const params: string[] = [];
      const ok = route.parts.every((p, i) => {
        const actual = parts[i] ?? "";
        if (p.startsWith(":")) params.push(decodeURIComponent(actual));
        return p.startsWith(":") || p === actual;
      });
      if (ok) return { handler: route.handler, params };
    }
    throw new HttpError(404, "M_UNRECOGNIZED", `stand-in: no endpoint ${method} ${pathname}`);
  }
}

/** What answering a request needs from the stand-in. */
export interface Answering {
  baseUrl: string;
  router: StandinRouter;
  requests: StandinRequest[];
  userFor(token: string): string | undefined;
  takeFailure(path: string): InjectedFailure | undefined;
}

/**
 * Answers one request as the stand-in does: an injected failure first, then the route
 * (404 when none), then the access token check; every answer goes into `requests`.
 */
export async function answer(req: IncomingMessage, res: ServerResponse, how: Answering): Promise<void> {
  const url = new URL(req.url ?? "/", how.baseUrl);
  const method = req.method ?? "GET";
  let status = 500;
  let userId: string | undefined;
  try {
    const body = await readBody(req);
    const injected = how.takeFailure(url.pathname);
    if (injected) {
      throw new HttpError(injected.status, injected.errcode ?? "M_UNKNOWN", "injected failure", {
        ...(injected.retryAfterMs === undefined ? {} : { retry_after_ms: injected.retryAfterMs }),
      });
    }
    const { handler, params } = how.router.match(method, url.pathname);
    const token =
      /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1] ??
      url.searchParams.get("access_token") ??
      "";
    userId = how.userFor(token);
    if (!userId && !url.pathname.endsWith("/versions")) {
      throw new HttpError(401, "M_UNKNOWN_TOKEN", "unknown access token");
    }
    const json = parseJson(body);
    const reply = await handler({
      method,
      params,
      query: url.searchParams,
      body,
      json,
      userId: userId ?? "",
      token,
      req,
    });
    status = reply.status ?? 200;
    if (reply.raw) {
      res.writeHead(status, { "Content-Type": reply.raw.contentType });
      res.end(reply.raw.data);
    } else {
      res.writeHead(status, { "Content-Type": "application/json" });
      res.end(JSON.stringify(reply.json ?? {}));
    }
  } catch (err) {
    const e = err instanceof HttpError ? err : new HttpError(500, "M_UNKNOWN", String(err));
    status = e.status;
    if (!res.headersSent) res.writeHead(status, { "Content-Type": "application/json" });
    res.end(JSON.stringify({ errcode: e.errcode, error: e.message, ...e.extra }));
  } finally {
    how.requests.push({ method, path: url.pathname, status, ...(userId ? { userId } : {}) });
  }
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** A JSON object body, or `{}` for an empty, malformed or non-object one, as lenient as the handlers need. */
export function parseJson(body: Buffer): Record<string, unknown> {
  if (body.length === 0) return {};
  try {
    const value: unknown = JSON.parse(body.toString("utf8"));
    return value !== null && typeof value === "object" ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

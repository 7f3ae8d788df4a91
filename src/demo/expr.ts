/**
 * A tiny arithmetic language for the symbolic tools: numbers, variables, + - * / ^
 * (or **), parentheses and implicit multiplication ("2x"). It is parsed by hand and
 * evaluated by walking the tree; nothing is ever passed to eval().
 */

/** A parsed expression. */
export type Expr =
  | { readonly kind: "num"; readonly value: number }
  | { readonly kind: "var"; readonly name: string }
  | { readonly kind: "neg"; readonly arg: Expr }
  | { readonly kind: "add" | "sub" | "mul" | "div" | "pow"; readonly left: Expr; readonly right: Expr };

/** A user's expression that cannot be read or computed; its message is written for the person. */
export class ExprError extends Error {}

/** Long inputs and huge powers are refused so a request cannot make the server spin. */
const MAX_LENGTH = 500;
const MAX_POWER = 12;

const TOKEN = /\s*(?:(\d+(?:\.\d+)?|\.\d+)|([a-zA-Z][a-zA-Z0-9_]*)|(\*\*|[-+*/^()]))/y;

function tokenize(source: string): string[] {
  if (source.length > MAX_LENGTH)
    throw new ExprError(`the expression is longer than ${MAX_LENGTH} characters`);
  const tokens: string[] = [];
  TOKEN.lastIndex = 0;
  while (TOKEN.lastIndex < source.length) {
    const start = TOKEN.lastIndex;
    const match = TOKEN.exec(source);
    if (match === null) {
      if (source.slice(start).trim() === "") break;
      const at = source.slice(start).search(/\S/) + start;
      throw new ExprError(`unexpected "${source[at]}" at position ${at + 1}`);
    }
    tokens.push(match[3] === "**" ? "^" : match[0].trim());
  }
  return tokens;
}

/** Parses an expression (not an equation). */
export function parseExpr(source: string): Expr {
  const tokens = tokenize(source);
  let at = 0;
  const peek = (): string | undefined => tokens[at];
  const expect = (token: string): void => {
    if (tokens[at] !== token) throw new ExprError(`expected "${token}" ${where()}`);
    at += 1;
  };
  const where = (): string => (at < tokens.length ? `before "${tokens[at]}"` : "at the end");
  const startsFactor = (token: string | undefined): boolean =>
    token !== undefined && /^[\d.a-zA-Z(]/.test(token);

  function sum(): Expr {
    let left = product();
    for (let op = peek(); op === "+" || op === "-"; op = peek()) {
      at += 1;
      left = { kind: op === "+" ? "add" : "sub", left, right: product() };
    }
    return left;
  }
  function product(): Expr {
    let left = unary();
    for (let op = peek(); op === "*" || op === "/" || startsFactor(op); op = peek()) {
      if (op === "*" || op === "/") at += 1;
      left = { kind: op === "/" ? "div" : "mul", left, right: unary() };
    }
    return left;
  }
  function unary(): Expr {
    const op = peek();
    if (op === "-" || op === "+") {
      at += 1;
      const arg = unary();
      return op === "-" ? { kind: "neg", arg } : arg;
    }
    return power();
  }
  function power(): Expr {
    const base = atom();
    if (peek() !== "^") return base;
    at += 1;
    return { kind: "pow", left: base, right: unary() };
  }
  function atom(): Expr {
    const token = peek();
    if (token === undefined) throw new ExprError("expected a number, a variable or ( at the end");
    at += 1;
    if (token === "(") {
      const inner = sum();
      expect(")");
      return inner;
    }
    if (/^[\d.]/.test(token)) return { kind: "num", value: Number(token) };
    if (/^[a-zA-Z]/.test(token)) return { kind: "var", name: token };
    at -= 1;
    throw new ExprError(`expected a number, a variable or ( ${where()}`);
  }

  const tree = sum();
  if (at < tokens.length) throw new ExprError(`unexpected "${tokens[at]}"`);
  return tree;
}

/** The variables of an expression, sorted. */
export function variables(expr: Expr): string[] {
  const found = new Set<string>();
  const walk = (node: Expr): void => {
    if (node.kind === "var") found.add(node.name);
    else if (node.kind === "neg") walk(node.arg);
    else if (node.kind !== "num") {
      walk(node.left);
      walk(node.right);
    }
  };
  walk(expr);
  return [...found].sort();
}

/** Evaluates an expression with the given variable values (NaN or ±Infinity where undefined). */
export function evaluate(expr: Expr, values: Readonly<Record<string, number>>): number {
  switch (expr.kind) {
    case "num":
      return expr.value;
    case "var":
      return values[expr.name] ?? Number.NaN;
    case "neg":
      return -evaluate(expr.arg, values);
    case "add":
      return evaluate(expr.left, values) + evaluate(expr.right, values);
    case "sub":
      return evaluate(expr.left, values) - evaluate(expr.right, values);
    case "mul":
      return evaluate(expr.left, values) * evaluate(expr.right, values);
    case "div":
      return evaluate(expr.left, values) / evaluate(expr.right, values);
    case "pow":
      return evaluate(expr.left, values) ** evaluate(expr.right, values);
  }
}

/** A polynomial: monomial key ("" for the constant, else "x^2*y") to coefficient. */
export type Poly = Map<string, number>;

function monomial(powers: ReadonlyMap<string, number>): string {
  return [...powers]
    .filter(([, power]) => power !== 0)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, power]) => (power === 1 ? name : `${name}^${power}`))
    .join("*");
}

function powersOf(key: string): Map<string, number> {
  if (key === "") return new Map();
  return new Map(
    key.split("*").map((part) => {
      const [name = "", power = "1"] = part.split("^");
      return [name, Number(power)];
    }),
  );
}

function addTo(poly: Poly, key: string, coefficient: number): void {
  const sum = (poly.get(key) ?? 0) + coefficient;
  // Float noise from constant division ("x/3*3") must not leave a phantom term.
  if (Math.abs(sum) < 1e-12) poly.delete(key);
  else poly.set(key, sum);
}

function multiply(a: Poly, b: Poly): Poly {
  const product: Poly = new Map();
  for (const [keyA, coefA] of a) {
    for (const [keyB, coefB] of b) {
      const powers = powersOf(keyA);
      for (const [name, power] of powersOf(keyB)) powers.set(name, (powers.get(name) ?? 0) + power);
      addTo(product, monomial(powers), coefA * coefB);
    }
  }
  return product;
}

function constantOf(poly: Poly): number | undefined {
  if ([...poly.keys()].some((key) => key !== "")) return undefined;
  return poly.get("") ?? 0;
}

/** Expands an expression into a polynomial; `undefined` when it is not one (a variable in a divisor or an exponent). */
export function toPoly(expr: Expr): Poly | undefined {
  const combine = (left: Expr, right: Expr, sign: number): Poly | undefined => {
    const a = toPoly(left);
    const b = toPoly(right);
    if (a === undefined || b === undefined) return undefined;
    const sum = new Map(a);
    for (const [key, coefficient] of b) addTo(sum, key, sign * coefficient);
    return sum;
  };
  switch (expr.kind) {
    case "num":
      return expr.value === 0 ? new Map() : new Map([["", expr.value]]);
    case "var":
      return new Map([[expr.name, 1]]);
    case "neg":
      return combine({ kind: "num", value: 0 }, expr.arg, -1);
    case "add":
      return combine(expr.left, expr.right, 1);
    case "sub":
      return combine(expr.left, expr.right, -1);
    case "mul": {
      const a = toPoly(expr.left);
      const b = toPoly(expr.right);
      return a === undefined || b === undefined ? undefined : multiply(a, b);
    }
    case "div": {
      const a = toPoly(expr.left);
      const divisor = toPoly(expr.right);
      const constant = divisor === undefined ? undefined : constantOf(divisor);
      if (a === undefined || constant === undefined) return undefined;
      if (constant === 0) throw new ExprError("it divides by zero");
      return multiply(a, new Map([["", 1 / constant]]));
    }
    case "pow": {
      const base = toPoly(expr.left);
      const exponent = toPoly(expr.right);
      const n = exponent === undefined ? undefined : constantOf(exponent);
      if (base === undefined || n === undefined || !Number.isInteger(n) || n < 0) return undefined;
      if (n > MAX_POWER) throw new ExprError(`powers above ${MAX_POWER} are not expanded`);
      let result: Poly = new Map([["", 1]]);
      for (let i = 0; i < n; i += 1) result = multiply(result, base);
      return result;
    }
  }
}

/** Formats a number without float noise (0.1 + 0.2 shows as 0.3). */
export function formatNumber(value: number): string {
  return String(Number(value.toPrecision(12)));
}

/** Graded order: higher total degree first, then higher powers of alphabetically earlier variables. */
function termOrder(a: string, b: string): number {
  const [pa, pb] = [powersOf(a), powersOf(b)];
  const total = (powers: Map<string, number>): number => [...powers.values()].reduce((sum, p) => sum + p, 0);
  if (total(pa) !== total(pb)) return total(pb) - total(pa);
  for (const name of [...new Set([...pa.keys(), ...pb.keys()])].sort()) {
    const difference = (pb.get(name) ?? 0) - (pa.get(name) ?? 0);
    if (difference !== 0) return difference;
  }
  return 0;
}

/** Writes a polynomial in a canonical order (a^2 + 2*a*b + b^2). */
export function formatPoly(poly: Poly): string {
  const terms = [...poly]
    .sort(([a], [b]) => termOrder(a, b))
    .map(([key, coefficient], index) => {
      const size = formatNumber(Math.abs(coefficient));
      const body = key === "" ? size : size === "1" ? key : `${size}*${key}`;
      const sign = coefficient < 0 ? "-" : "+";
      return index === 0 ? `${sign === "-" ? "-" : ""}${body}` : ` ${sign} ${body}`;
    });
  return terms.length === 0 ? "0" : terms.join("");
}

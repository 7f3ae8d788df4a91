import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["dist/", "node_modules/", ".state/", "coverage/"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/consistent-type-imports": "error",
      "no-console": "off",
    },
  },
  {
    // Platform types never leave their folder: an adapter must not import another adapter.
    files: ["src/telegram/**"],
    rules: { "no-restricted-imports": ["error", { patterns: ["**/matrix/**", "**/shell/**"] }] },
  },
  {
    files: ["src/matrix/**"],
    rules: { "no-restricted-imports": ["error", { patterns: ["**/telegram/**", "**/shell/**"] }] },
  },
  {
    files: ["src/shell/**"],
    rules: { "no-restricted-imports": ["error", { patterns: ["**/telegram/**", "**/matrix/**"] }] },
  },
  {
    // Renderers are pure: no I/O modules.
    files: ["src/render/**"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            "node:*",
            "ioredis",
            "bullmq",
            "grammy",
            "matrix-bot-sdk",
            "**/sessions/**",
            "**/queue/**",
          ],
        },
      ],
    },
  },
);

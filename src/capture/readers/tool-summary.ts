/**
 * A tool call, summarised the same way by every reader: which tool, on what (a path, a command, a
 * query), and the first lines of what it returned, bounded, so a captured session keeps what was
 * done without the megabytes of file contents and logs a tool can return. Limbic's own calls are
 * never summarised: capturing them would store the memory back into itself.
 */
import { cleanTurnText } from '../clean-text.js';
import type { ToolSummary } from '../conversation.js';

/** Lines of a tool's result kept in its summary. */
export const TOOL_RESULT_LINES = 3;
/** Characters of a tool's result kept in its summary. */
export const TOOL_RESULT_CHARS = 300;
/** Characters of what a tool acted on. */
export const TOOL_TARGET_CHARS = 200;

/**
 * Names Limbic's tools carry in each client when the server is called "memory" (what `limbic
 * connect` names it) or "limbic": Claude Code `mcp__memory__search_nodes` (plugins
 * `mcp__plugin_limbic_limbic__…`), Gemini CLI `mcp_memory_search_nodes` or `memory__search_nodes`.
 */
const OWN_TOOL_NAME = /^(?:mcp__(?:plugin_[^_]*_)?(?:memory|limbic)__|mcp_(?:memory|limbic)_|(?:memory|limbic)__)/i;

/** True for a call of Limbic's own tools, which capture never keeps. */
export function isLimbicTool(name: string): boolean {
  return OWN_TOOL_NAME.test(name);
}

/** The fields that name what a tool acted on, most telling first. */
const TARGET_FIELDS = [
  'file_path',
  'notebook_path',
  'path',
  'absolute_path',
  'dir_path',
  'command',
  'cmd',
  'url',
  'query',
  'pattern',
  'description',
  'prompt',
  'name',
  'title',
] as const;

/** The text up to `max` characters, cut at a character boundary with an ellipsis. */
export function bounded(text: string, max: number): string {
  if (text.length <= max) return text;
  const cut = Array.from(text.slice(0, max)).join('');
  // A surrogate pair split by the slice leaves a lone half at the end: drop it.
  return `${cut.replace(/[\uD800-\uDBFF]$/, '')}…`;
}

/** The first line of a value, on one line, bounded. */
function oneLine(value: string): string {
  const line = value.split('\n').find((l) => l.trim() !== '') ?? '';
  return bounded(line.trim(), TOOL_TARGET_CHARS);
}

/**
 * What a call acted on, from its input: the path, command, URL or query it named (Grep and Glob:
 * the pattern and where); empty when its input names nothing recognisable.
 * @example toolTarget('Bash', { command: 'npm test\nnpm run lint' }) // 'npm test'
 */
export function toolTarget(input: unknown): string {
  if (typeof input === 'string') return oneLine(input);
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return '';
  const fields = input as Record<string, unknown>;
  for (const key of TARGET_FIELDS) {
    const value = fields[key];
    if (typeof value !== 'string' || value.trim() === '') continue;
    // Grep and Glob: "pattern in path" says more than either.
    if (key === 'path' && typeof fields.pattern === 'string') return oneLine(`${fields.pattern} in ${value}`);
    return oneLine(value);
  }
  // An array of commands (Codex's shell tool: ["bash", "-lc", "ls"]).
  for (const key of ['command', 'cmd', 'argv'] as const) {
    const value = fields[key];
    if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return oneLine((value as string[]).join(' '));
  }
  return '';
}

/**
 * The first lines of a tool's result, client chrome stripped, at most TOOL_RESULT_LINES lines and
 * TOOL_RESULT_CHARS characters.
 */
export function toolResult(text: string): string {
  const lines = cleanTurnText(text)
    .split('\n')
    .map((l) => l.trimEnd())
    .filter((l) => l.trim() !== '');
  return bounded(lines.slice(0, TOOL_RESULT_LINES).join('\n'), TOOL_RESULT_CHARS);
}

/** A tool call's summary, or undefined for Limbic's own tools. */
export function summariseTool(name: string, input: unknown, result = '', failed?: boolean): ToolSummary | undefined {
  if (isLimbicTool(name)) return undefined;
  return { tool: name, target: toolTarget(input), result: toolResult(result), ...(failed === true ? { failed } : {}) };
}

/** The text of a tool result's content in the Messages API shape: a string or a list of blocks. */
export function blockText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((block: unknown) => {
      if (typeof block === 'string') return block;
      if (typeof block === 'object' && block !== null && typeof (block as { text?: unknown }).text === 'string') {
        return (block as { text: string }).text;
      }
      return '';
    })
    .filter((t) => t !== '')
    .join('\n');
}

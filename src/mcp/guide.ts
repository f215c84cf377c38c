/**
 * What Limbic tells an agent about using it (issue 28): the server's `instructions`, read once at
 * the handshake, and two prompts a person can call from the client. Short on purpose: the
 * instructions ride in every conversation's context (874 characters, about 220 tokens at 4 characters a token).
 */
import { z } from 'zod';
import type { McpServer } from '@modelcontextprotocol/server';

export const INSTRUCTIONS = [
  'Limbic is your long-term memory: a knowledge graph of entities (people, projects, places, ideas), each with observations (short facts) and relations between them.',
  'Before answering about the user, their work or anything discussed before, search it: search_semantic with a question or a few words (meaning and exact words at once), then open_nodes on the entities you use (opening is what teaches the ranking).',
  'Save what will matter later: stable facts, preferences, decisions, plans. One entity per thing, named as people name it ("Ana García", "Project Atlas"), observations one fact each; add_observations to what exists (search first: never a second entity for the same thing), create_relations in active voice ("Ana works_on Project Atlas").',
  'When a fact changes, add the new one with supersedes set to the old text: the old one becomes history instead of a contradiction.',
].join(' ');

/** The two prompts: recall a topic, save a conversation's facts. */
export function registerPrompts(server: McpServer): void {
  server.registerPrompt(
    'recall',
    {
      title: 'Recall what Limbic knows',
      description: 'Search the memory for a topic and summarise what it holds, saying what it does not know',
      argsSchema: z.object({ topic: z.string().min(1).describe('What to recall: a person, project, subject or question') }),
    },
    ({ topic }) => ({
      messages: [
        {
          role: 'user',
          content: {
            type: 'text',
            text:
              `Recall what the memory knows about: ${topic}\n\n` +
              '1. Call search_semantic with that topic (and again with other words for it if the first results miss).\n' +
              '2. Call open_nodes on the entities that are about it, to read all their observations and relations.\n' +
              '3. Summarise what the memory holds, citing entity names; say plainly what it does not know. Do not add facts from elsewhere.',
          },
        },
      ],
    }),
  );
  server.registerPrompt(
    'remember',
    {
      title: 'Save this conversation to Limbic',
      description: 'Save the durable facts of this conversation: new entities, added observations, relations, superseded facts',
      argsSchema: z.object({ focus: z.string().optional().describe('Optional: what to save about (default: everything worth keeping)') }),
    },
    ({ focus }) => ({
      messages: [
        {
          role: 'user',
          content: {
            type: 'text',
            text:
              `Save to the memory the facts of this conversation worth keeping${focus === undefined || focus === '' ? '' : `, about: ${focus}`}.\n\n` +
              '1. List the stable facts, preferences, decisions and plans (not small talk, not what is only true for this moment).\n' +
              '2. For each thing they are about, search_nodes or search_semantic first: add_observations to an entity that exists, create_entities only for a new one (named as people name it, with an entityType).\n' +
              '3. One fact per observation. A fact that replaces an older one: add_observations with supersedes set to the old text.\n' +
              '4. create_relations between the entities, in active voice ("Ana works_on Project Atlas").\n' +
              '5. Say in one line what you saved.',
          },
        },
      ],
    }),
  );
}

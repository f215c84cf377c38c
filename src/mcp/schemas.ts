/**
 * Tool schemas at the MCP boundary. The nine official tools keep the official field names and
 * types; Limbic's extras are optional, and limits are stated in the message a client sees.
 */
import { z } from 'zod';
import { LIMITS } from '../core/limits.js';

const chars = (max: number, what: string) =>
  z.string().max(max, { message: `${what} is longer than the limit of ${max} characters; shorten or split it` });
const items = <T extends z.ZodTypeAny>(schema: T, max: number, what: string) =>
  z.array(schema).max(max, { message: `too many ${what} in one call: the limit is ${max}; split the call` });

const name = chars(LIMITS.maxNameChars, 'the name');
const observation = chars(LIMITS.maxObservationChars, 'an observation');

/** Status words accepted on input, Spanish or English; parseStatus maps them to the stored value. */
export const statusSchema = z.enum(['activo', 'pausado', 'completado', 'archivado', 'active', 'paused', 'completed', 'archived'], {
  message: 'status must be one of activo, pausado, completado, archivado (or active, paused, completed, archived)',
});

export const EntitySchema = z.object({
  name: name.describe('The name of the entity'),
  entityType: chars(LIMITS.maxNameChars, 'the entity type').describe('The type of the entity'),
  observations: items(observation, LIMITS.maxObservationsPerItem, 'observations').describe(
    'An array of observation contents associated with the entity',
  ),
});

/** create_entities accepts an optional status (Limbic extra). */
export const NewEntitySchema = EntitySchema.extend({
  status: statusSchema
    .optional()
    .describe('Optional lifecycle status: activo/active (default), pausado/paused, completado/completed, archivado/archived'),
});

export const RelationSchema = z.object({
  from: name.describe('The name of the entity where the relation starts'),
  to: name.describe('The name of the entity where the relation ends'),
  relationType: chars(LIMITS.maxNameChars, 'the relation type').describe('The type of the relation'),
});

/** Output entity shape: exactly the official one. */
export const EntityOutputSchema = z.object({
  name: z.string(),
  entityType: z.string(),
  observations: z.array(z.string()),
});
export const RelationOutputSchema = z.object({ from: z.string(), to: z.string(), relationType: z.string() });
export const GraphOutput = { entities: z.array(EntityOutputSchema), relations: z.array(RelationOutputSchema) };
export const SuccessOutput = { success: z.boolean(), message: z.string() };

export const createEntitiesInput = { entities: items(NewEntitySchema, LIMITS.maxItemsPerCall, 'entities') };
export const createRelationsInput = { relations: items(RelationSchema, LIMITS.maxItemsPerCall, 'relations') };
export const addObservationsInput = {
  observations: items(
    z.object({
      entityName: name.describe('The name of the entity to add the observations to'),
      contents: items(observation, LIMITS.maxObservationsPerItem, 'observations').describe('An array of observation contents to add'),
      kind: chars(100, 'the kind')
        .optional()
        .describe('Optional kind of these observations (default "generic"; "metadata" ranks lower in search_semantic)'),
    }),
    LIMITS.maxItemsPerCall,
    'observation groups',
  ),
};
export const deleteEntitiesInput = {
  entityNames: items(name, LIMITS.maxItemsPerCall, 'names').describe('An array of entity names to delete'),
};
export const deleteObservationsInput = {
  deletions: items(
    z.object({
      entityName: name.describe('The name of the entity containing the observations'),
      observations: items(observation, LIMITS.maxObservationsPerItem, 'observations').describe('An array of observations to delete'),
    }),
    LIMITS.maxItemsPerCall,
    'deletions',
  ),
};
export const deleteRelationsInput = {
  relations: items(RelationSchema, LIMITS.maxItemsPerCall, 'relations').describe('An array of relations to delete'),
};
export const searchNodesInput = {
  query: chars(LIMITS.maxQueryChars, 'the query').describe(
    'The search query to match against entity names, types, and observation content',
  ),
};
export const openNodesInput = {
  names: items(name, LIMITS.maxItemsPerCall, 'names').describe('An array of entity names to retrieve'),
};

export const searchSemanticInput = {
  query: chars(LIMITS.maxQueryChars, 'the query')
    .min(1, { message: 'the query is empty; say what to look for' })
    .describe('What to recall, in words: exact terms, names or a paraphrase'),
  limit: z
    .number()
    .int({ message: 'limit must be a whole number' })
    .min(1, { message: 'limit must be at least 1' })
    .max(LIMITS.maxSearchLimit, { message: `limit must be at most ${LIMITS.maxSearchLimit}` })
    .optional()
    .describe('How many results (1-100, default 10)'),
};

export const setStatusInput = {
  name: name.describe('The entity whose status to set'),
  status: statusSchema.describe('activo/active, pausado/paused, completado/completed, archivado/archived'),
};

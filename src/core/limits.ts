/**
 * Input limits. A request over a limit is refused whole with a message that states the limit,
 * so nothing is half-written and the caller knows how to split the work.
 */
export const LIMITS = {
  /** Characters in one name, entity type, relation type. */
  maxNameChars: 1_000,
  /** Characters in one observation. */
  maxObservationChars: 20_000,
  /** Items (entities, relations, observation groups, names) in one tool call. */
  maxItemsPerCall: 1_000,
  /** Observations in one entity or one add_observations item. */
  maxObservationsPerItem: 1_000,
  /** Observations one entity may hold, however many calls added them (issue 26). */
  maxObservationsPerEntity: 1_000,
  /**
   * UTF-8 bytes of one entity's observations, however many calls added them: an entity must fit in
   * one answer (maxAnswerBytes holds it twice, as text and as structured content), as one that a
   * single call of maxCallTextBytes creates does.
   */
  maxEntityTextBytes: 4 * 1024 * 1024,
  /** Characters in a search query. */
  maxQueryChars: 10_000,
  /** Results a search may return at once. */
  maxSearchLimit: 100,
  /** Entities in one page of read_graph or search_nodes, when the caller asks for pages. */
  maxGraphPage: 1_000,
  /**
   * Relations in one answer of read_graph, search_nodes or open_nodes: the most relations_limit
   * takes and what an answer carries when the caller names none (issue 35: a hub of 150,000
   * relations made a 23 MiB answer that was refused); relationCount and next_relations_offset
   * then say how many there are and where the next page starts.
   */
  maxRelationsPerPage: 10_000,
  /**
   * UTF-8 bytes of one answer's relations as JSON: a page stops before the relation that would
   * pass it (at least one is always shown), so long contexts cannot carry a page of
   * maxRelationsPerPage over maxAnswerBytes (it holds them twice, as text and structured content).
   */
  maxRelationBytesPerPage: 2 * 1024 * 1024,
  /**
   * UTF-8 bytes of all the text in one tool call (every string summed). create_entities and
   * add_observations answer with what they stored, twice (as text and as structuredContent), and
   * the MCP SDK's stdio clients drop an answer over 10 MiB; 4 MiB of text keeps that answer near
   * 8.4 MB. Bytes, not characters, so the bound holds for every script.
   */
  maxCallTextBytes: 4 * 1024 * 1024,
  /**
   * UTF-8 bytes of one answer as it travels (the JSON-RPC message, text and structured content):
   * the MCP SDK's stdio clients drop a message over 10 MiB and close the session (issue 26), so an
   * answer over this is refused with what to page instead.
   */
  maxAnswerBytes: 9 * 1024 * 1024,
} as const;

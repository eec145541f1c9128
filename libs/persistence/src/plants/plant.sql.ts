import { statement } from '../sql/statement';

export const FIND_PLANT = statement({
  name: 'find-plant',
  runBy: 'PlantRepository.findById',
  params: ["the plant's id"],
  text: 'SELECT * FROM plants WHERE id = $1',
});

export const LIST_PLANTS = statement({
  name: 'list-plants',
  runBy: 'PlantRepository.listNewest',
  params: ['the page: rows numbered below this seq, or null for the newest', 'how many rows at most'],
  text: 'SELECT * FROM plants WHERE ($1::bigint IS NULL OR seq < $1) ORDER BY seq DESC LIMIT $2',
});

/** Events stored in the window. */
export const COUNT_STORED_SINCE = statement({
  name: 'count-stored-since',
  runBy: 'PlantRepository.countStoredSince',
  params: ['the window, hours back from now'],
  text: "SELECT count(*)::int AS n FROM processed_events WHERE processed_at >= now() - $1 * interval '1 hour'",
});

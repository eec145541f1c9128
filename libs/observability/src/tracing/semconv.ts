// OpenTelemetry semantic-convention attribute names this service sets. The stable HTTP ones come from
// @opentelemetry/semantic-conventions; the messaging and database ones are still "incubating" there, and
// OpenTelemetry asks users to copy incubating names rather than import them (they may change between minor
// versions), so they are written here, in one place.
export {
  ATTR_ERROR_TYPE,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_REQUEST_RESEND_COUNT,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_HTTP_ROUTE,
  ATTR_SERVER_ADDRESS,
  ATTR_SERVER_PORT,
  ATTR_SERVICE_NAME,
  ATTR_SERVICE_VERSION,
  ATTR_URL_FULL,
  ATTR_URL_PATH,
  ATTR_URL_SCHEME,
  ATTR_USER_AGENT_ORIGINAL,
} from '@opentelemetry/semantic-conventions';

export const ATTR_MESSAGING_SYSTEM = 'messaging.system';
export const ATTR_MESSAGING_OPERATION_TYPE = 'messaging.operation.type';
export const ATTR_MESSAGING_OPERATION_NAME = 'messaging.operation.name';
export const ATTR_MESSAGING_DESTINATION_NAME = 'messaging.destination.name';
export const ATTR_MESSAGING_DESTINATION_PARTITION_ID = 'messaging.destination.partition.id';
export const ATTR_MESSAGING_CONSUMER_GROUP_NAME = 'messaging.consumer.group.name';
export const ATTR_MESSAGING_MESSAGE_ID = 'messaging.message.id';
export const ATTR_MESSAGING_KAFKA_MESSAGE_KEY = 'messaging.kafka.message.key';
export const ATTR_MESSAGING_KAFKA_OFFSET = 'messaging.kafka.offset';
export const ATTR_DB_SYSTEM_NAME = 'db.system.name';
export const ATTR_DB_OPERATION_NAME = 'db.operation.name';
export const ATTR_DB_COLLECTION_NAME = 'db.collection.name';

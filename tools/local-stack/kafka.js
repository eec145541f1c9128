// @ts-check
// A real Apache Kafka 3.9.2 broker (KRaft, one node as broker and controller) from Maven Central jars,
// started with plain `java`. The jars live in .local/kafka/lib (git-ignored) and are fetched once.
const { spawn, spawnSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { Kafka, logLevel } = require('kafkajs');
const { step } = require('./progress');
const { portOpen } = require('./processes');
const { ensurePortFree } = require('./ports');
const { Supervised } = require('./supervisor');

const { ROOT, LOCAL } = require('./paths');

const LIB = path.join(LOCAL, 'kafka/lib');
/** The broker's Maven pom, config template and logging, beside this launcher. */
const CONFIG = path.join(__dirname, 'kafka');
const CLUSTER_ID = '4L6g3nShT-eMCtK--X86sw';

function jarsPresent() {
  return fs.existsSync(LIB) && fs.readdirSync(LIB).some((f) => /^kafka_2\.13-.*\.jar$/.test(f));
}

/** Fetches the broker jars with Maven, printing each artifact as it arrives. */
function fetchJars() {
  if (jarsPresent()) return;
  const s = step('Fetching Apache Kafka 3.9.2 from Maven Central (first run only, ~50 MB)');
  const mvn = spawnSync(
    'mvn',
    ['-B', '-f', path.join(CONFIG, 'pom.xml'), `-Dkafka.lib.dir=${LIB}`, 'dependency:copy-dependencies'],
    {
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    },
  );
  const downloads = (mvn.stdout || '').split('\n').filter((l) => l.includes('Downloaded from'));
  if (mvn.status !== 0 || !jarsPresent()) {
    process.stderr.write(mvn.stdout + mvn.stderr);
    throw new Error('mvn could not fetch the Kafka broker jars (is Maven installed and Maven Central reachable?)');
  }
  s.done(`${downloads.length} artifacts downloaded, ${fs.readdirSync(LIB).length} jars in .local/kafka/lib`);
}

async function answersMetadata(brokers) {
  const admin = new Kafka({
    brokers,
    clientId: 'plant-store-probe',
    logLevel: logLevel.NOTHING,
    retry: { retries: 0 },
  }).admin();
  try {
    await admin.connect();
    await admin.describeCluster();
    return true;
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}

/** Checks what can be checked before anything starts (the ports), and fetches the jars once. */
async function prepareKafka({ port, controllerPort }) {
  const remedy = 'Stop it, or set KAFKA_BROKERS=host:port to use that broker on purpose.';
  await ensurePortFree(port, 'Kafka', remedy);
  await ensurePortFree(controllerPort, 'Kafka (controller listener)', remedy);
  fetchJars();
}

/**
 * A broker on 127.0.0.1:port, supervised (see supervisor.js), in its own process group so that a terminal's
 * Ctrl-C reaches the launcher, which stops the apps before the broker. Nothing already on the port is reused:
 * the launcher says who holds it (set KAFKA_BROKERS to use a broker of your own on purpose). `fresh` wipes the
 * data folder first (tests, benchmarks); otherwise data persists between runs.
 */
async function startKafka({ name, port, controllerPort, fresh = false, heapMb = 512, restart = false }) {
  const brokers = [`127.0.0.1:${port}`];
  await prepareKafka({ port, controllerPort });
  const dir = path.join(LOCAL, 'kafka', name);
  if (fresh) fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(path.join(dir, 'data'), { recursive: true });
  const props = fs
    .readFileSync(path.join(CONFIG, 'server.properties.in'), 'utf8')
    .replaceAll('__DATA_DIR__', path.join(dir, 'data'))
    .replaceAll('__PORT__', String(port))
    .replaceAll('__CONTROLLER_PORT__', String(controllerPort));
  const propsFile = path.join(dir, 'server.properties');
  fs.writeFileSync(propsFile, props);
  const logOpt = `-Dlog4j.configuration=file:${path.join(CONFIG, 'log4j.properties')}`;
  const cp = `${LIB}/*`;
  const logFile = path.join(dir, 'broker.log');

  const s = step(`Starting Kafka broker on 127.0.0.1:${port} (log: ${path.relative(ROOT, logFile)})`);
  const format = spawnSync(
    'java',
    [
      '-Xmx256m',
      logOpt,
      '-cp',
      cp,
      'kafka.tools.StorageTool',
      'format',
      '-t',
      CLUSTER_ID,
      '-c',
      propsFile,
      '--ignore-formatted',
    ],
    { encoding: 'utf8' },
  );
  if (format.status !== 0) throw new Error(`kafka storage format failed:\n${format.stdout}${format.stderr}`);

  const service = new Supervised('kafka', {
    owner: name,
    restart,
    group: true,
    logHint: path.relative(ROOT, logFile),
    stopGraceMs: 20000,
    spawn: () => {
      const log = fs.openSync(logFile, 'a');
      const child = spawn(
        'java',
        // C1 only: measured on 2 cores, C2 kept compiling broker code for minutes and took more CPU than the
        // broker's own request handling; a local broker at a few thousand records/s does not need C2's code.
        [
          `-Xms128m`,
          `-Xmx${heapMb}m`,
          '-XX:+UseG1GC',
          '-XX:MaxGCPauseMillis=20',
          '-XX:TieredStopAtLevel=1',
          '-Djava.awt.headless=true',
          logOpt,
          '-cp',
          cp,
          'kafka.Kafka',
          propsFile,
        ],
        { stdio: ['ignore', log, log], detached: true },
      );
      fs.closeSync(log);
      return child;
    },
    ready: async () => (await portOpen(port)) && (await answersMetadata(brokers)),
  });
  await service.start();
  s.done();
  return {
    brokers,
    service,
    stop: () => service.stop(),
  };
}

module.exports = { startKafka, prepareKafka, fetchJars };

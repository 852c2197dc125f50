export default async function globalTeardown() {
  const embedded = globalThis.__bookcaseEmbedded;
  globalThis.__bookcaseEmbedded = undefined;
  await embedded?.stop();
}

export default async function globalTeardown() {
  await globalThis.__bookcaseEmbedded?.stop();
}

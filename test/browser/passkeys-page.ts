// The page of test/e2e/browser-passkeys.test.ts, bundled by esbuild: the two WebAuthn ceremonies as
// a web client does them with the browser's own JSON helpers (PublicKeyCredential
// .parseCreationOptionsFromJSON / .parseRequestOptionsFromJSON and .toJSON(), Chromium 129+), so the
// options the service answers go in and the JSON it verifies comes out unchanged.

declare global {
  interface Window {
    passkeys: typeof passkeys;
  }
}

const passkeys = {
  async create(options: PublicKeyCredentialCreationOptionsJSON): Promise<unknown> {
    const credential = (await navigator.credentials.create({ publicKey: PublicKeyCredential.parseCreationOptionsFromJSON(options) })) as PublicKeyCredential;
    return credential.toJSON();
  },
  async get(options: PublicKeyCredentialRequestOptionsJSON): Promise<{ id: string; response: { userHandle?: string } }> {
    const credential = (await navigator.credentials.get({ publicKey: PublicKeyCredential.parseRequestOptionsFromJSON(options) })) as PublicKeyCredential;
    return credential.toJSON() as { id: string; response: { userHandle?: string } };
  },
};

window.passkeys = passkeys;

/**
 * The terminal's API keys: the list (prefixes only), a new key (shown once, optionally with
 * subscription write access), and revocation after a confirmation.
 */
import type { ApiKey, CreatedApiKey } from "@paydesk/client"
import { useState } from "preact/hooks"
import { Confirm } from "./Confirm.js"
import { useAction, useDashboard, useLoad } from "./Context.js"
import { formatTime } from "./I18n.js"

export const ApiKeys = () => {
  const { session, t, language } = useDashboard()
  const { busy, error, report, run } = useAction()
  const [keys, setKeys] = useState<ReadonlyArray<ApiKey> | null>(null)
  const [created, setCreated] = useState<CreatedApiKey | null>(null)
  const [write, setWrite] = useState(false)
  const [revoking, setRevoking] = useState<ApiKey | null>(null)
  const [reload, setReload] = useState(0)
  const options = { terminalId: session.terminalId }

  useLoad(() => session.client.apiKeys.list(options), setKeys, report, [reload])

  /** A change to the keys, then the list again. */
  const act = (work: () => Promise<void>) => run(async () => {
    await work()
    setReload((n) => n + 1)
  })

  return (
    <>
      <h2>{t("keys.title")}</h2>
      {error === null ? null : <p class="error" role="alert">{error}</p>}
      {keys === null ? null : (
        <div class="table-wrap">
          <table class="payments">
            <thead>
              <tr>
                <th scope="col">{t("keys.prefix")}</th>
                <th scope="col">{t("keys.created")}</th>
                <th scope="col">{t("keys.write")}</th>
                <th scope="col">{t("keys.revoked")}</th>
                <th scope="col"><span class="visually-hidden">{t("keys.revoke")}</span></th>
              </tr>
            </thead>
            <tbody>
              {keys.map((k) => (
                <tr key={k.id}>
                  <td data-label={t("keys.prefix")}><code>{k.prefix}…</code></td>
                  <td data-label={t("keys.created")}>{formatTime(language, k.created_at)}</td>
                  <td data-label={t("keys.write")}>{k.subscription_write ? t("yes") : t("no")}</td>
                  <td data-label={t("keys.revoked")}>{formatTime(language, k.revoked_at)}</td>
                  <td>{k.revoked_at === null ? (
                    <button type="button" class="secondary" aria-label={`${t("keys.revoke")} ${k.prefix}`} onClick={() => setRevoking(k)}>{t("keys.revoke")}</button>
                  ) : null}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {revoking === null ? null : (
        <Confirm id="revoke" question={t("keys.revokeConfirm", { prefix: revoking.prefix })} busy={busy}
          onConfirm={() => act(async () => {
            await session.client.apiKeys.revoke(revoking.id, options)
            // The key shown once, now revoked, is no key to copy any more.
            if (created?.id === revoking.id) setCreated(null)
            setRevoking(null)
          })}
          onCancel={() => setRevoking(null)} />
      )}
      <div class="key-new">
        <label class="check">
          <input type="checkbox" checked={write} onChange={(e) => setWrite((e.currentTarget as HTMLInputElement).checked)} />
          <span>{t("keys.write")}</span>
        </label>
        <button type="button" disabled={busy} onClick={() => act(async () => {
          setCreated(await session.client.apiKeys.create({ ...options, subscription_write: write }))
        })}>{t("keys.create")}</button>
      </div>
      {created === null ? null : (
        <div class="secret" role="status">
          <p>{t("keys.shownOnce")}</p>
          <code class="reveal">{created.api_key}</code>
        </div>
      )}
    </>
  )
}

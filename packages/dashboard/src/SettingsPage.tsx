/**
 * Terminal settings: the settings form, the callback endpoint's health and a test event, the API
 * keys, the signing-secret rotation (after a confirmation; the new secret is shown once), and the
 * signed-in user's password change.
 */
import { PaydeskCallError, type SigningSecretRotation, type TerminalDetails } from "@paydesk/client"
import { useRef, useState } from "preact/hooks"
import { ApiKeys } from "./ApiKeys.js"
import { isolated } from "./Bidi.js"
import { Confirm } from "./Confirm.js"
import { useAction, useDashboard, useLoad } from "./Context.js"
import { PasswordForm } from "./PasswordForm.js"
import { pendingKey, settled, settles, slotOf } from "./PendingWrite.js"
import { attemptResult, formatTime, sentAccepted } from "./I18n.js"
import { TerminalForm } from "./TerminalForm.js"

/** Where the tab keeps the Idempotency-Key of the rotation whose outcome is not known yet. */
const pendingRotation = "paydesk.pendingRotation"

export const SettingsPage = () => {
  const { session, t, language } = useDashboard()
  const { busy, error, report, run } = useAction()
  const [terminal, setTerminal] = useState<TerminalDetails | null>(null)
  const [confirming, setConfirming] = useState(false)
  const [rotated, setRotated] = useState<SigningSecretRotation | null>(null)
  const [tested, setTested] = useState<{ readonly text: string; readonly accepted: boolean } | null>(null)
  const [reload, setReload] = useState(0)
  const rotateButton = useRef<HTMLButtonElement>(null)

  useLoad(() => session.client.terminals.get(session.terminalId), setTerminal, report, [reload])

  // A press after one whose answer was lost repeats its rotation (same Idempotency-Key) and is
  // answered its secret: a second rotation would make the unseen one the previous secret, which
  // signs X-Signature during the overlap, so a receiver holding the last secret it saw rejects them.
  const rotate = async () => {
    const terminalId = session.terminalId
    const slot = slotOf(pendingRotation, terminalId)
    const idempotencyKey = pendingKey(slot, terminalId)
    await run(async () => {
      try {
        setRotated(await session.client.signingSecret.rotate({ terminalId, idempotencyKey }))
      } catch (cause) {
        if (settles(cause)) settled(slot)
        if (cause instanceof PaydeskCallError && cause.outcomeUnknown) throw new Error(t("settings.rotateUnknown"))
        throw cause
      } finally {
        setReload((n) => n + 1)
      }
      settled(slot)
    })
    setConfirming(false)
  }

  const testEvent = () => {
    setTested(null)
    return run(async () => {
      const sent = await session.client.terminals.testEvent(session.terminalId)
      const accepted = sentAccepted(sent)
      setTested({ text: t(accepted ? "terminal.testSent" : "terminal.testFailed", { result: attemptResult(t, sent) }), accepted })
      setReload((n) => n + 1)
    })
  }

  return (
    <section aria-labelledby="settings-title">
      <h1 id="settings-title" tabIndex={-1}>{t("settings.title")}</h1>
      {error === null ? null : <p class="error" role="alert">{error}</p>}
      {terminal === null ? (error === null ? <p role="status">{t("loading")}</p> : null) : (
        <>
          {terminal.status === "disabled" ? <p class="notice" role="note">{t("terminal.disabled")}</p> : null}
          <dl class="details">
            <dt>{t("terminal.label")}</dt><dd><code>{terminal.id}</code> {isolated(terminal.name)}</dd>
            <dt>{t("settings.endpoint")}</dt>
            <dd>
              <span class={`badge endpoint-${terminal.callback_endpoint.status}`}>{t(`endpoint.${terminal.callback_endpoint.status}`)}</span>{" "}
              {terminal.callback_endpoint.last_attempt_at === null ? null : formatTime(language, terminal.callback_endpoint.last_attempt_at)}{" "}
              {terminal.callback_endpoint.last_error ?? ""}
            </dd>
          </dl>
          <p>
            <button type="button" class="secondary" disabled={busy || terminal.callback_url === null} onClick={testEvent}>{t("terminal.testEvent")}</button>
          </p>
          {tested === null ? null : <p class={tested.accepted ? "ok" : "error"} role="status">{tested.text}</p>}
          <h2>{t("terminal.form")}</h2>
          <TerminalForm key={terminal.id} terminal={terminal} onSaved={() => setReload((n) => n + 1)} />
        </>
      )}
      <ApiKeys />
      <h2>{t("settings.secret")}</h2>
      {terminal?.previous_secret_expires_at ? <p>{t("settings.overlapUntil", { at: formatTime(language, terminal.previous_secret_expires_at) })}</p> : null}
      {confirming ? (
        <Confirm id="rotate" question={t("settings.rotateConfirm")} busy={busy} onConfirm={rotate} onCancel={() => {
          setConfirming(false)
          setTimeout(() => rotateButton.current?.focus())
        }} />
      ) : (
        <button type="button" ref={rotateButton} onClick={() => setConfirming(true)}>{t("settings.rotate")}</button>
      )}
      {rotated === null ? null : (
        <div class="secret" role="status">
          <p>{t("settings.newSecret")}</p>
          <code class="reveal">{rotated.signing_secret}</code>
        </div>
      )}
      <h2>{t("password.title")}</h2>
      <p>{t("password.note")}</p>
      <PasswordForm />
    </section>
  )
}

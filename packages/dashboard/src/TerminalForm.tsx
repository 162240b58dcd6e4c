/**
 * The terminal's settings form: callback URL, the payer's redirect URLs, conversion mode and time,
 * platform branding. Sends only what changed (an emptied URL is sent as null: removed). The
 * conversion time is Moscow time (the API's `conversion_time`), unlike every other time the
 * dashboard shows: the label says so, and a hint gives the same moment in the browser's time zone.
 */
import type { TerminalDetails, TerminalSettings } from "@paydesk/client"
import { useState } from "preact/hooks"
import { useAction, useDashboard, useDraft } from "./Context.js"
import { moscowTimeLocally, type Translate } from "./I18n.js"

type Draft = {
  callback_url: string
  success_redirect_url: string
  fail_redirect_url: string
  conversion_mode: "instant" | "scheduled"
  conversion_time: string
  show_platform_branding: boolean
}

const draftOf = (t: TerminalDetails): Draft => ({
  callback_url: t.callback_url ?? "",
  success_redirect_url: t.success_redirect_url ?? "",
  fail_redirect_url: t.fail_redirect_url ?? "",
  conversion_mode: t.conversion_mode,
  conversion_time: t.conversion_time ?? "",
  show_platform_branding: t.show_platform_branding
})

/** The settings that differ from the terminal's. */
const changes = (terminal: TerminalDetails, draft: Draft): TerminalSettings => {
  const before = draftOf(terminal)
  const out: { -readonly [K in keyof TerminalSettings]: TerminalSettings[K] } = {}
  for (const key of ["callback_url", "success_redirect_url", "fail_redirect_url", "conversion_time"] as const) {
    if (draft[key].trim() !== before[key]) out[key] = draft[key].trim() === "" ? null : draft[key].trim()
  }
  if (draft.conversion_mode !== before.conversion_mode) out.conversion_mode = draft.conversion_mode
  if (draft.show_platform_branding !== before.show_platform_branding) out.show_platform_branding = draft.show_platform_branding
  return out
}

/** The hint under the conversion time: the time in the browser's time zone; null when it is not HH:MM or the zone keeps Moscow time. */
export const conversionHint = (t: Translate, text: string, now: Date = new Date(), timeZone?: string): string | null => {
  const local = moscowTimeLocally(text, now, timeZone)
  if (local === null || (local.time === text.trim() && local.day === 0)) return null
  const key = local.day > 0 ? "terminal.conversionLocal.next" : local.day < 0 ? "terminal.conversionLocal.prev" : "terminal.conversionLocal"
  return t(key, { time: text.trim(), local: local.time })
}

export const TerminalForm = ({ terminal, onSaved }: { terminal: TerminalDetails; onSaved: () => void }) => {
  const { session, t } = useDashboard()
  const { busy, error, clear, run } = useAction()
  // A saved or rotated terminal comes back with a new updated_at: the draft starts again from it,
  // while the form (and its "saved" message) stays mounted.
  const [draft, setDraft] = useDraft(() => draftOf(terminal), terminal.updated_at)
  const [note, setNote] = useState<string | null>(null)
  const hint = conversionHint(t, draft.conversion_time)
  const message = error === null ? (note === null ? null : { text: note, error: false }) : { text: error, error: true }
  const text = (key: "callback_url" | "success_redirect_url" | "fail_redirect_url" | "conversion_time") =>
    ({ value: draft[key], onInput: (e: Event) => setDraft({ ...draft, [key]: (e.currentTarget as HTMLInputElement).value }) })

  const save = (event: SubmitEvent) => {
    event.preventDefault()
    const settings = changes(terminal, draft)
    clear()
    setNote(Object.keys(settings).length === 0 ? t("terminal.unchanged") : null)
    if (Object.keys(settings).length === 0) return
    return run(async () => {
      await session.client.terminals.update(terminal.id, settings)
      setNote(t("terminal.saved"))
      onSaved()
    })
  }

  return (
    <form class="settings-form" onSubmit={save}>
      <label for="callback_url">{t("settings.callbackUrl")}</label>
      <input id="callback_url" type="url" inputMode="url" autocomplete="off" {...text("callback_url")} />
      <label for="success_redirect_url">{t("terminal.successUrl")}</label>
      <input id="success_redirect_url" type="url" autocomplete="off" {...text("success_redirect_url")} />
      <label for="fail_redirect_url">{t("terminal.failUrl")}</label>
      <input id="fail_redirect_url" type="url" autocomplete="off" {...text("fail_redirect_url")} />
      <label for="conversion_mode">{t("terminal.conversion")}</label>
      <select id="conversion_mode" value={draft.conversion_mode}
        onChange={(e) => setDraft({ ...draft, conversion_mode: (e.currentTarget as HTMLSelectElement).value as Draft["conversion_mode"] })}>
        <option value="instant">{t("terminal.conversion.instant")}</option>
        <option value="scheduled">{t("terminal.conversion.scheduled")}</option>
      </select>
      {draft.conversion_mode === "scheduled" ? (
        <>
          <label for="conversion_time">{t("terminal.conversionTime")}</label>
          <input id="conversion_time" placeholder="18:00" aria-describedby={hint === null ? undefined : "conversion_time_hint"} {...text("conversion_time")} />
          {hint === null ? null : <p id="conversion_time_hint" class="note">{hint}</p>}
        </>
      ) : null}
      <label class="check">
        <input type="checkbox" checked={draft.show_platform_branding}
          onChange={(e) => setDraft({ ...draft, show_platform_branding: (e.currentTarget as HTMLInputElement).checked })} />
        <span>{t("terminal.branding")}</span>
      </label>
      <div><button type="submit" disabled={busy}>{t("terminal.save")}</button></div>
      {message === null ? null : <p class={message.error ? "error" : "ok"} role={message.error ? "alert" : "status"}>{message.text}</p>}
    </form>
  )
}

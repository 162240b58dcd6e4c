/**
 * The signed-in user's password change: the current password, the new one twice (the two must
 * match before anything is sent). The server ends every other session of the user and answers a
 * new token pair, which the SDK's session takes (`onTokens` keeps its refresh token): this tab
 * stays signed in, other devices are signed out.
 */
import { PaydeskApiError } from "@paydesk/client"
import { useState } from "preact/hooks"
import { useAction, useDashboard } from "./Context.js"

const empty = { current: "", next: "", repeat: "" }

export const PasswordForm = () => {
  const { session, t } = useDashboard()
  const { busy, error, clear, run } = useAction()
  const [draft, setDraft] = useState(empty)
  const [note, setNote] = useState<{ readonly text: string; readonly error: boolean } | null>(null)
  const message = error === null ? note : { text: error, error: true }
  // Updated from the state as it is (a browser's suggested password fills both new fields at once).
  const field = (key: keyof typeof empty) =>
    ({
      value: draft[key],
      onInput: (e: Event) => {
        const value = (e.currentTarget as HTMLInputElement).value
        setDraft((current) => ({ ...current, [key]: value }))
      }
    })

  const change = (event: SubmitEvent) => {
    event.preventDefault()
    clear()
    setNote(null)
    if (draft.next !== draft.repeat) return setNote({ text: t("password.mismatch"), error: true })
    if (draft.next === draft.current) return setNote({ text: t("password.same"), error: true })
    return run(async () => {
      try {
        await session.client.auth.changePassword({ current_password: draft.current, new_password: draft.next })
      } catch (cause) {
        // Said in the page's words, not the API's field name.
        if (cause instanceof PaydeskApiError && cause.field === "current_password") return setNote({ text: t("password.wrongCurrent"), error: true })
        throw cause
      }
      setDraft(empty)
      setNote({ text: t("password.changed"), error: false })
    })
  }

  return (
    <form class="settings-form" onSubmit={change}>
      <label for="current_password">{t("password.current")}</label>
      <input id="current_password" type="password" autocomplete="current-password" required {...field("current")} />
      <label for="new_password">{t("password.new")}</label>
      <input id="new_password" type="password" autocomplete="new-password" required minLength={8} maxLength={256} {...field("next")} />
      <label for="repeat_password">{t("password.repeat")}</label>
      <input id="repeat_password" type="password" autocomplete="new-password" required minLength={8} maxLength={256} {...field("repeat")} />
      <div><button type="submit" disabled={busy}>{t("password.submit")}</button></div>
      {message === null ? null : <p class={message.error ? "error" : "ok"} role={message.error ? "alert" : "status"}>{message.text}</p>}
    </form>
  )
}

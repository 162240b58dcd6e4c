/** The sign-in form: e-mail and password (the e-mail remembered for next time). */
import { useEffect, useRef, useState } from "preact/hooks"
import * as Auth from "./Auth.js"
import { apiErrorText, type Language, type Translate } from "./I18n.js"
import { PaydeskApiError, PaydeskConnectionError } from "@paydesk/client"

/** Why a sign-in failed, for the form: the API's refusal, no terminal, no answer at all, or else the generic text. */
export const signInErrorText = (t: Translate, language: Language, cause: unknown): string =>
  cause instanceof PaydeskApiError ? apiErrorText(language, cause)
    : cause instanceof Auth.NoTerminals ? t("signin.noTerminals")
    : cause instanceof PaydeskConnectionError ? t("error.connection") : t("error.generic")

export const SignIn = ({ t, language, ended, onSignedIn, onEnded }: {
  t: Translate
  language: Language
  ended: boolean
  onSignedIn: (session: Auth.Session) => void
  onEnded: () => void
}) => {
  const keptEmail = Auth.rememberedEmail()
  const [error, setError] = useState<string | null>(null)
  const [busy, setBusy] = useState(false)
  const first = useRef<HTMLInputElement>(null)
  useEffect(() => first.current?.focus(), [])

  const submit = async (event: SubmitEvent) => {
    event.preventDefault()
    const form = new FormData(event.currentTarget as HTMLFormElement)
    setBusy(true)
    setError(null)
    try {
      onSignedIn(await Auth.signIn({
        email: String(form.get("email") ?? "").trim(),
        password: String(form.get("password") ?? "")
      }, onEnded))
    } catch (cause) {
      setError(signInErrorText(t, language, cause))
      setBusy(false)
    }
  }

  return (
    <main class="signin" id="main">
      <h1>{t("signin.title")}</h1>
      {ended ? <p class="notice" role="status">{t("signin.expired")}</p> : null}
      <form onSubmit={submit} aria-describedby={error === null ? undefined : "signin-error"}>
        <label for="email">{t("signin.email")}</label>
        <input id="email" name="email" type="email" autocomplete="username" required ref={first} defaultValue={keptEmail} />
        <label for="password">{t("signin.password")}</label>
        <input id="password" name="password" type="password" autocomplete="current-password" required />
        {error === null ? null : <p id="signin-error" class="error" role="alert">{error}</p>}
        <button type="submit" disabled={busy}>{busy ? t("signin.busy") : t("signin.submit")}</button>
      </form>
    </main>
  )
}

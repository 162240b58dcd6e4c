/**
 * The dashboard's shell: the sign-in page until there is a session, then a header on every page
 * (navigation, the sandbox/live switch, the language switch, sign-out) around the current route.
 */
import { PaydeskApiError, PaydeskConnectionError } from "@paydesk/client"
import { useCallback, useEffect, useMemo, useRef, useState } from "preact/hooks"
import * as Auth from "./Auth.js"
import { isolated, withoutBidiControls } from "./Bidi.js"
import { DashboardContext, type Dashboard } from "./Context.js"
import { HomePage } from "./HomePage.js"
import { apiErrorText, initialLanguage, keepLanguage, translator, type Language, type Translate } from "./I18n.js"
import { PaymentPage } from "./PaymentPage.js"
import { PaymentsPage } from "./PaymentsPage.js"
import { base, follow, forgetQuery, href, navigate, parse, useLocation } from "./Router.js"
import { PayoutsPage } from "./PayoutsPage.js"
import { SettingsPage } from "./SettingsPage.js"
import { SignIn } from "./SignIn.js"
import { SubscriptionPage } from "./SubscriptionPage.js"
import { SubscriptionsPage } from "./SubscriptionsPage.js"

/**
 * The text of an error for the page: an API refusal's (`apiErrorText`), a call that got no answer
 * (in English with the client's detail, which is English), else the generic text with the error's.
 */
export const describeError = (t: Translate, language: Language, error: unknown): string =>
  error instanceof PaydeskApiError ? apiErrorText(language, error)
    : error instanceof PaydeskConnectionError ? (language === "ru" ? t("error.connection") : `${t("error.connection")} (${error.message})`)
    : error instanceof Error ? `${t("error.generic")}: ${error.message}` : t("error.generic")

const LanguageSwitch = ({ language, setLanguage, t }: { language: Language; setLanguage: (l: Language) => void; t: Translate }) => (
  <label class="switch">
    <span>{t("lang.label")}</span>
    <select value={language} onChange={(e) => setLanguage((e.currentTarget as HTMLSelectElement).value as Language)}>
      <option value="en">English</option>
      <option value="ru">Русский</option>
    </select>
  </label>
)

export const App = () => {
  const [language, setLanguageState] = useState<Language>(initialLanguage)
  const [sandbox, setSandboxState] = useState<boolean>(Auth.initialSandbox)
  const [session, setSession] = useState<Auth.Session | null | "resuming">("resuming")
  const [ended, setEnded] = useState(false)
  const location = useLocation()
  const t = useMemo(() => translator(language), [language])
  const main = useRef<HTMLElement>(null)

  const setLanguage = (next: Language) => {
    keepLanguage(next)
    setLanguageState(next)
  }
  const setSandbox = (next: boolean) => {
    Auth.keepSandbox(next)
    forgetQuery("page")
    setSandboxState(next)
  }
  const onEnded = useCallback(() => {
    Auth.forget()
    setEnded(true)
    setSession(null)
  }, [])

  useEffect(() => {
    document.documentElement.lang = language
  }, [language])

  useEffect(() => {
    Auth.resume(onEnded).then(setSession, () => setSession(null))
  }, [])

  // After signing in, the first page's heading takes the focus (the form that had it is gone).
  const signedIn = useRef(false)
  useEffect(() => {
    if (!signedIn.current || session === null || session === "resuming") return
    signedIn.current = false
    main.current?.querySelector<HTMLElement>("h1")?.focus()
  }, [session])

  // Each page's heading takes the focus after a navigation (not on the first load).
  const first = useRef(true)
  useEffect(() => {
    if (first.current) {
      first.current = false
      return
    }
    main.current?.querySelector<HTMLElement>("h1")?.focus()
  }, [location.pathname])

  if (session === "resuming") return <p class="loading" role="status">{t("loading")}</p>

  if (session === null) {
    return (
      <div class="signin-page">
        <div class="top-switches"><LanguageSwitch language={language} setLanguage={setLanguage} t={t} /></div>
        <SignIn t={t} language={language} ended={ended} onSignedIn={(s) => {
          signedIn.current = true
          setEnded(false)
          setSession(s)
          if (!location.pathname.startsWith(`${base}/`)) navigate(href({ page: "home" }))
        }} onEnded={onEnded} />
      </div>
    )
  }

  const dashboard: Dashboard = {
    session,
    sandbox,
    language,
    t,
    fail: (error) => {
      if (error instanceof PaydeskApiError && error.status === 401) onEnded()
      return describeError(t, language, error)
    }
  }
  const route = parse(location.pathname)
  // A page reloads its data when the mode or the terminal changes.
  const view = `${session.terminalId}:${sandbox}`
  const current = (page: string) => (route.page === page || (page === "payments" && route.page === "payment") || (page === "subscriptions" && route.page === "subscription") ? "page" : undefined)

  return (
    <DashboardContext.Provider value={dashboard}>
      <a class="skip" href="#main">{t("app.skip")}</a>
      <header class={sandbox ? "header sandbox" : "header"}>
        <div class="brand">{t("app.name")}</div>
        <nav aria-label={t("nav.main")}>
          <a href={href({ page: "home" })} onClick={follow} aria-current={current("home")}>{t("nav.home")}</a>
          <a href={href({ page: "payments" })} onClick={follow} aria-current={current("payments")}>{t("nav.payments")}</a>
          <a href={href({ page: "subscriptions" })} onClick={follow} aria-current={current("subscriptions")}>{t("nav.subscriptions")}</a>
          <a href={href({ page: "payouts" })} onClick={follow} aria-current={current("payouts")}>{t("nav.payouts")}</a>
          <a href={href({ page: "settings" })} onClick={follow} aria-current={current("settings")}>{t("nav.settings")}</a>
        </nav>
        <div class="switches">
          <fieldset class="env">
            <legend>{t("env.label")}</legend>
            <label><input type="radio" name="env" value="sandbox" checked={sandbox} onChange={() => setSandbox(true)} /> {t("env.sandbox")}</label>
            <label><input type="radio" name="env" value="live" checked={!sandbox} onChange={() => setSandbox(false)} /> {t("env.live")}</label>
          </fieldset>
          <LanguageSwitch language={language} setLanguage={setLanguage} t={t} />
          {session.terminals.length > 1
            ? (
              <label class="switch">
                <span>{t("terminal.label")}</span>
                <select value={session.terminalId} title={withoutBidiControls(session.terminals.find((x) => x.id === session.terminalId)?.name ?? "")} onChange={(e) => {
                  forgetQuery("page")
                  setSession(Auth.switchTerminal(session, (e.currentTarget as HTMLSelectElement).value))
                }}>
                  {session.terminals.map((x) => <option key={x.id} value={x.id}>{withoutBidiControls(x.name)}</option>)}
                </select>
              </label>
            )
            : <span class="terminal-name" title={`${withoutBidiControls(session.terminals[0]?.name ?? "")} (${session.terminalId})`}>{isolated(session.terminals[0]?.name ?? "")}</span>}
          <span class="who">{isolated(session.email)}</span>
          <button type="button" onClick={async () => {
            await Auth.signOut(session)
            setEnded(false)
            setSession(null)
          }}>{t("signout")}</button>
        </div>
      </header>
      {sandbox ? <p class="banner" role="note">{t("env.banner")}</p> : null}
      <main id="main" ref={main}>
        {route.page === "home" ? <HomePage key={view} />
          : route.page === "payments" ? <PaymentsPage key={view} search={location.search} />
          : route.page === "payment" ? <PaymentPage id={route.id} />
          : route.page === "subscriptions" ? <SubscriptionsPage key={view} search={location.search} />
          : route.page === "subscription" ? <SubscriptionPage id={route.id} />
          : route.page === "payouts" ? <PayoutsPage key={session.terminalId} search={location.search} />
          : route.page === "settings" ? <SettingsPage key={session.terminalId} />
          : (
            <section>
              <h1 tabIndex={-1}>{t("notFound.title")}</h1>
              <p><a href={href({ page: "home" })} onClick={follow}>{t("notFound.home")}</a></p>
            </section>
          )}
      </main>
    </DashboardContext.Provider>
  )
}

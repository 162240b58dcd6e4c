/** The dashboard's entry: renders the app into `#app`. */
import { render } from "preact"
import { App } from "./App.js"
import "./style.css"

const root = document.getElementById("app")
if (root !== null) render(<App />, root)

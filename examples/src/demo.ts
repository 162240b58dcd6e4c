// Placeholder: replaced by the real demo of the core.
console.log("demo placeholder")

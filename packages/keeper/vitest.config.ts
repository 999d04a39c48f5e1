import { packageConfig } from '../../vitest.package.mjs'

export default packageConfig(import.meta.dirname)

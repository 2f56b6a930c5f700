# Installs every library with a CMake package config, so another project can
# find_package(lrkit) and link lrkit::schedules (and the other torch-free
# libraries) without LibTorch, or lrkit::distributed / lrkit::train when this
# build had LibTorch (the config then finds the same LibTorch again).
include(CMakePackageConfigHelpers)

set(lrkit_installed common options h5 schedules controllers reweight diagnostics)
if(LRKIT_HAVE_TORCH)
  list(APPEND lrkit_installed distributed train)
endif()
set(lrkit_targets "")
foreach(name IN LISTS lrkit_installed)
  set_target_properties(lrkit_${name} PROPERTIES EXPORT_NAME ${name})
  list(APPEND lrkit_targets lrkit_${name})
  install(DIRECTORY ${name}/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
endforeach()

install(TARGETS ${lrkit_targets} EXPORT lrkitTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT lrkitTargets NAMESPACE lrkit:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/lrkit)

set(LRKIT_CONFIG_WITH_TORCH ${LRKIT_HAVE_TORCH})
configure_package_config_file(cmake/lrkitConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/lrkitConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/lrkit)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/lrkitConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/lrkitConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/lrkitConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/lrkit)

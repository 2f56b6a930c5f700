# Installs lrkit_schedules (and the small HDF5 helper it reads files with) with a
# CMake package config, so another project can find_package(lrkit) and link
# lrkit::schedules without LibTorch.
include(CMakePackageConfigHelpers)

set_target_properties(lrkit_schedules PROPERTIES EXPORT_NAME schedules)
set_target_properties(lrkit_h5 PROPERTIES EXPORT_NAME h5)

install(TARGETS lrkit_schedules lrkit_h5 EXPORT lrkitTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY schedules/include/ h5/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT lrkitTargets NAMESPACE lrkit:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/lrkit)

configure_package_config_file(cmake/lrkitConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/lrkitConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/lrkit)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/lrkitConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/lrkitConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/lrkitConfigVersion.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/lrkit)
